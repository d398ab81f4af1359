package fakeaws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// Policies gives principals identity policies for SimulatePrincipalPolicy to evaluate: the key is the
// principal's ARN (a role or a user, exactly as callers pass it in PolicySourceArn). The evaluator and
// what it does not model are described in policy.go.
type Policies map[string]PrincipalPolicies

// PrincipalPolicies are one principal's identity policy documents (JSON) and its permissions boundary
// document ("" for none).
type PrincipalPolicies struct {
	Policies            []string
	PermissionsBoundary string
}

// WithPolicies gives principals identity policies. SimulatePrincipalPolicy then evaluates a question the
// snapshot's simulations section does not answer, and answers even when the snapshot has no such
// section. New panics on a document the evaluator refuses, since a fake answering from a policy it
// misread would test nothing: check documents first with LoadPolicies, which returns the error.
func WithPolicies(p Policies) Option {
	return func(s *Server) {
		compiled, err := p.compile()
		if err != nil {
			panic(fmt.Errorf("fakeaws: WithPolicies: %w", err))
		}
		s.policies = compiled
	}
}

// principalPolicies are a principal's policies, parsed.
type principalPolicies struct {
	identity []*policyDoc
	boundary *policyDoc
}

// principalARNRE is an IAM role or user ARN, paths allowed.
var principalARNRE = regexp.MustCompile(`^arn:[a-z0-9-]+:iam::\d{12}:(role|user)/[\w+=,.@/-]+$`)

// Source types of MatchedStatements: every document here is one the account wrote.
const policySourceType = "user-managed"

// checkPrincipal refuses a key of Policies that is no role or user ARN: SimulatePrincipalPolicy could
// never be asked about it.
func checkPrincipal(arn string) error {
	if !principalARNRE.MatchString(arn) {
		return fmt.Errorf("principal %q: not the ARN of an IAM role or user (arn:aws:iam::111122223333:role/NAME)", arn)
	}
	return nil
}

// compile parses every document, naming the principal and the document of each problem.
func (p Policies) compile() (map[string]*principalPolicies, error) {
	out := make(map[string]*principalPolicies, len(p))
	var errs []error
	for _, arn := range slices.Sorted(maps.Keys(p)) {
		pp := p[arn]
		if err := checkPrincipal(arn); err != nil {
			errs = append(errs, err)
			continue
		}
		c := &principalPolicies{}
		for i, doc := range pp.Policies {
			d, err := parsePolicy("policy-"+strconv.Itoa(i+1), policySourceType, doc)
			if err != nil {
				errs = append(errs, fmt.Errorf("principal %s: policies[%d]: %w", arn, i, err))
				continue
			}
			c.identity = append(c.identity, d)
		}
		if pp.PermissionsBoundary != "" {
			d, err := parsePolicy("permissions-boundary", policySourceType, pp.PermissionsBoundary)
			if err != nil {
				errs = append(errs, fmt.Errorf("principal %s: permissionsBoundary: %w", arn, err))
			}
			c.boundary = d
		}
		out[arn] = c
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// policiesFile is the YAML form of Policies. A document is a JSON string or, for convenience, the same
// document written as YAML.
type policiesFile struct {
	Principals map[string]struct {
		Policies            []yaml.Node `yaml:"policies"`
		PermissionsBoundary yaml.Node   `yaml:"permissionsBoundary"`
	} `yaml:"principals"`
}

// LoadPolicies reads a policies file and checks every document with the evaluator:
//
//	principals:
//	  arn:aws:iam::111122223333:role/KarpenterController-prod:
//	    policies:
//	      - '{"Version":"2012-10-17","Statement":[…]}'
//	    permissionsBoundary: '{…}'   # optional
//
// An error names the line, the principal and what is wrong.
func LoadPolicies(data []byte) (Policies, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f policiesFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty policies file: expected a principals mapping")
		}
		return nil, fmt.Errorf("policies file: %w", err)
	}
	if f.Principals == nil {
		return nil, errors.New("policies file: expected a principals mapping")
	}
	p := Policies{}
	var errs []error
	for _, arn := range slices.Sorted(maps.Keys(f.Principals)) {
		entry := f.Principals[arn]
		if err := checkPrincipal(arn); err != nil {
			errs = append(errs, err)
			continue
		}
		var pp PrincipalPolicies
		for i := range entry.Policies {
			n := &entry.Policies[i]
			doc, err := nodeDocument(n)
			if err != nil {
				errs = append(errs, fmt.Errorf("line %d: principal %s: policies[%d]: %w", n.Line, arn, i, err))
				continue
			}
			if _, err := parsePolicy("", "", doc); err != nil {
				errs = append(errs, fmt.Errorf("line %d: principal %s: policies[%d]: %w", n.Line, arn, i, err))
				continue
			}
			pp.Policies = append(pp.Policies, doc)
		}
		if n := &entry.PermissionsBoundary; n.Kind != 0 {
			doc, err := nodeDocument(n)
			if err == nil {
				_, err = parsePolicy("", "", doc)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("line %d: principal %s: permissionsBoundary: %w", n.Line, arn, err))
			}
			pp.PermissionsBoundary = doc
		}
		p[arn] = pp
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// nodeDocument returns a policy document written as a JSON string or as a YAML mapping.
func nodeDocument(n *yaml.Node) (string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag != "!!str" {
			return "", fmt.Errorf("expected a policy document (a JSON string or a mapping), got %q", n.Value)
		}
		return n.Value, nil
	case yaml.MappingNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return "", err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return "", fmt.Errorf("the mapping is no JSON document: %w", err)
		}
		return string(b), nil
	}
	return "", errors.New("expected a policy document (a JSON string or a mapping)")
}
