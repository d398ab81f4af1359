package ec2

import (
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

// imageFilters are the EC2 filters of an AMI term (its owners go in the Owner parameter): built in the
// fetch, so that a cached answer costs nothing.
func imageFilters(t facts.ImageTerm) []ec2types.Filter {
	filters := []ec2types.Filter{filter("state", "available")}
	if t.ID != "" {
		filters = append(filters, filter("image-id", t.ID))
	}
	if t.Name != "" {
		filters = append(filters, filter("name", t.Name))
	}
	return append(filters, tagFilters(t.Tags)...)
}

// subnetFilters are the EC2 filters of a subnet term: an id selects alone, as in Karpenter.
func subnetFilters(t facts.SelectorTerm) []ec2types.Filter {
	if t.ID != "" {
		return []ec2types.Filter{filter("subnet-id", t.ID)}
	}
	return tagFilters(t.Tags)
}

// groupFilters are the EC2 filters of a security-group term: an id selects alone.
func groupFilters(t facts.SelectorTerm) []ec2types.Filter {
	if t.ID != "" {
		return []ec2types.Filter{filter("group-id", t.ID)}
	}
	var filters []ec2types.Filter
	if t.Name != "" {
		filters = append(filters, filter("group-name", t.Name))
	}
	return append(filters, tagFilters(t.Tags)...)
}

// tagFilters turns selector tags into EC2 filters: tag:KEY=pattern, or tag-key=KEY for "*" (any value).
func tagFilters(tags map[string]string) []ec2types.Filter {
	var out []ec2types.Filter
	for _, k := range sortedKeys(tags) {
		if tags[k] == "*" {
			out = append(out, filter("tag-key", k))
		} else {
			out = append(out, filter("tag:"+k, tags[k]))
		}
	}
	return out
}

func tagMap(tags []ec2types.Tag) map[string]string {
	if len(tags) == 0 {
		return nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
