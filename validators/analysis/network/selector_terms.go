package network

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// This file holds what subnet and security-group selector terms select (subnet_selection.go and
// security_group_selection.go memoise it per class), and how findings describe them.

// selected is what an EC2NodeClass's subnet or security-group terms select, or why it is unknown.
// Providers memoise the answers per term; subnetSelections and groupSelections memoise the union per
// object.
type selected[T any] struct {
	items []T
	err   error
}

// selectUnion asks the provider for each term and returns the union of the answers, in order. The
// result may be the provider's own answer: read it, do not modify it.
func selectUnion[T any](c *validators.Context, terms []objects.SelectorTerm, ask func(context.Context, facts.SelectorTerm) ([]T, error), id func(T) string) ([]T, error) {
	if len(terms) == 1 { // the common case: nothing to merge
		t := terms[0]
		return ask(c, facts.SelectorTerm{ID: t.ID, Name: t.Name, Tags: t.Tags})
	}
	seen := map[string]bool{}
	var out []T
	for _, t := range terms {
		got, err := ask(c, facts.SelectorTerm{ID: t.ID, Name: t.Name, Tags: t.Tags})
		if err != nil {
			return nil, err
		}
		for _, x := range got {
			if k := id(x); !seen[k] {
				seen[k] = true
				out = append(out, x)
			}
		}
	}
	return out, nil
}

// DescribeSelector describes subnet or security-group terms: "tags k=v | id subnet-…".
func DescribeSelector(terms []objects.SelectorTerm) string {
	var parts []string
	for _, t := range terms {
		var p []string
		if t.ID != "" {
			p = append(p, "id "+t.ID)
		}
		if t.Name != "" {
			p = append(p, "name "+t.Name)
		}
		var ks []string
		for k, v := range t.Tags {
			ks = append(ks, k+"="+v)
		}
		sort.Strings(ks)
		if len(ks) > 0 {
			p = append(p, "tags "+strings.Join(ks, ","))
		}
		parts = append(parts, strings.Join(p, " "))
	}
	return strings.Join(parts, " | ")
}

// ListInVPC completes a no-match fix (format with one %s for the cluster's name) with the command that
// lists what exists in the cluster's VPC, when the cluster is known.
func ListInVPC(c *validators.Context, what, call, format string) string {
	cl, err := c.Facts.Cluster(c)
	if err != nil || cl.Name == "" {
		return fmt.Sprintf(format, "<cluster name>")
	}
	fix := fmt.Sprintf(format, cl.Name)
	if cl.VPCID != "" {
		region := ""
		if cl.Region != "" {
			region = " --region " + cl.Region
		}
		fix += fmt.Sprintf("; `aws ec2 %s%s --filters Name=vpc-id,Values=%s` lists the %s of cluster %s's VPC", call, region, cl.VPCID, what, cl.Name)
	}
	return fix
}
