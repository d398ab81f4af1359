// Package trustpolicy reads a role's trust policy (the JSON document IAM GetRole returns) far enough to
// tell whether EC2 may assume the role for an instance profile: which statements allow or deny
// sts:AssumeRole to the EC2 service. No Go library evaluates IAM policy documents, so this decodes the
// grammar's few shapes with encoding/json by hand; it evaluates no conditions. node-role-trust-policy
// judges a node role by its Verdict.
package trustpolicy

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/karpenter-guard/karpenter-guard/validators"
)

// trustDocument is an IAM policy document as far as trust goes.
type trustDocument struct {
	Statement oneOrMany[trustStatement] `json:"Statement"`
}

// trustStatement is one statement of a trust policy.
type trustStatement struct {
	Sid          string            `json:"Sid"`
	Effect       string            `json:"Effect"`
	Principal    json.RawMessage   `json:"Principal"`
	NotPrincipal json.RawMessage   `json:"NotPrincipal"`
	Action       oneOrMany[string] `json:"Action"`
	NotAction    json.RawMessage   `json:"NotAction"`
	Condition    json.RawMessage   `json:"Condition"`
}

// oneOrMany is a policy element written as one value or a list of them.
type oneOrMany[T any] []T

// UnmarshalJSON accepts a value or a list.
func (o *oneOrMany[T]) UnmarshalJSON(b []byte) error {
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "[") {
		var list []T
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*o = list
		return nil
	}
	var one T
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*o = oneOrMany[T]{one}
	return nil
}

// ec2Principals are the service principals EC2 assumes an instance profile's role as.
var ec2Principals = []string{"ec2.amazonaws.com", "ec2.amazonaws.com.cn"}

// Verdict is what a trust policy says about EC2 assuming the role.
type Verdict struct {
	// Allowed: an Allow statement without a condition lets EC2 assume the role.
	Allowed bool
	// Conditional: an Allow statement lets EC2 assume the role only under a condition.
	Conditional bool
	// Denied names the unconditional Deny statement that refuses EC2 ("" when none does).
	Denied string
	// Negated: a statement uses NotPrincipal or NotAction, which this reading does not evaluate.
	Negated bool
}

// readTrust parses a trust policy and judges it for EC2 (see Verdict).
func readTrust(doc string) (Verdict, error) {
	var d trustDocument
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return Verdict{}, fmt.Errorf("the trust policy is not a policy document: %w", err)
	}
	var v Verdict
	for i, s := range d.Statement {
		if len(s.NotPrincipal) > 0 || len(s.NotAction) > 0 {
			v.Negated = true
			continue
		}
		ec2, err := namesEC2(s.Principal)
		if err != nil {
			return Verdict{}, fmt.Errorf("statement %d of the trust policy: %w", i+1, err)
		}
		if !ec2 || !assumesRole(s.Action) {
			continue
		}
		conditional := hasCondition(s.Condition)
		switch {
		case strings.EqualFold(s.Effect, "Deny") && !conditional && v.Denied == "":
			v.Denied = fmt.Sprintf("statement %d", i+1)
			if s.Sid != "" {
				v.Denied = fmt.Sprintf("statement %q", s.Sid)
			}
		case strings.EqualFold(s.Effect, "Allow") && conditional:
			v.Conditional = true
		case strings.EqualFold(s.Effect, "Allow"):
			v.Allowed = true
		}
	}
	return v, nil
}

// namesEC2 reports whether a Principal element covers the EC2 service: "*", {"AWS": "*"} (which IAM
// treats as "*"), or a Service entry naming ec2.amazonaws.com or ec2.amazonaws.com.cn.
func namesEC2(raw json.RawMessage) (bool, error) {
	if len(raw) == 0 {
		return false, nil
	}
	var star string
	if json.Unmarshal(raw, &star) == nil {
		return star == "*", nil
	}
	var byType map[string]oneOrMany[string]
	if err := json.Unmarshal(raw, &byType); err != nil {
		return false, fmt.Errorf("Principal is neither \"*\" nor an object of principal lists: %w", err)
	}
	for typ, values := range byType {
		for _, p := range values {
			switch {
			case strings.EqualFold(typ, "AWS") && p == "*":
				return true, nil
			case strings.EqualFold(typ, "Service"):
				for _, ec2 := range ec2Principals {
					if strings.EqualFold(p, ec2) {
						return true, nil
					}
				}
			}
		}
	}
	return false, nil
}

// assumesRole reports whether an Action element covers sts:AssumeRole, as IAM matches actions: case
// ignored, * and ? as wildcards (sts:AssumeRole, sts:*, *).
func assumesRole(actions oneOrMany[string]) bool {
	for _, a := range actions {
		// path.Match's wildcards are IAM's; an action holds no '/', '[' or '\\' that it would read
		// otherwise.
		if ok, err := path.Match(strings.ToLower(a), "sts:assumerole"); err == nil && ok {
			return true
		}
	}
	return false
}

// hasCondition reports whether a Condition element holds any condition ({} and null hold none).
func hasCondition(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return true // not an object: IAM would not have stored it; count it as a condition
	}
	return len(m) > 0
}

// Of returns the verdict on a role's trust policy as the facts hold it (URL-encoded or not), from
// the catalog's memory of recent policy texts (trustReadings).
func Of(c *validators.Context, doc string) (Verdict, error) {
	return validators.Shared(c, trustReadings).read(doc)
}

// trustReadings remembers the verdicts on the catalog's recent trust policies, by text: the audit
// re-evaluates every EC2NodeClass each interval, a cluster's classes share a few node roles, and
// decoding the policy with encoding/json is most of node-role-trust-policy's time.
var trustReadings = &validators.Resource[*trustMemory]{Name: "trust policy verdicts by text", New: func() *trustMemory {
	return newTrustMemory(maxRememberedTrusts)
}}

// maxRememberedTrusts is how many trust policy texts trustReadings remembers: a cluster's node roles
// are a few; a snapshot of every role in an account a few hundred.
const maxRememberedTrusts = 256

// maxRememberedTrustText is the longest trust policy text remembered: IAM caps a role's trust policy at
// 4,096 characters (2,048 by default), at most three times that URL-encoded. Longer texts, which IAM
// would not have stored, are read every time, so the memory held stays under 256 × 16 KiB.
const maxRememberedTrustText = 16 << 10

// trustMemory reads trust policies, remembering the verdicts on the size most recent texts. It is safe
// for concurrent use.
type trustMemory struct {
	readings *lru.Cache[string, trustReading]
}

// trustReading is readTrust's answer on one text.
type trustReading struct {
	v   Verdict
	err error
}

func newTrustMemory(size int) *trustMemory {
	c, err := lru.New[string, trustReading](size)
	if err != nil {
		panic(fmt.Sprintf("trust policy cache of %d: %v", size, err)) // only for a size below 1
	}
	return &trustMemory{readings: c}
}

// read returns readTrust's verdict on doc, URL-decoded when IAM's wire form, remembered by doc's text.
func (m *trustMemory) read(doc string) (Verdict, error) {
	if len(doc) > maxRememberedTrustText {
		return readTrust(decodeTrustDocument(doc))
	}
	if r, ok := m.readings.Get(doc); ok {
		return r.v, r.err
	}
	v, err := readTrust(decodeTrustDocument(doc))
	m.readings.Add(doc, trustReading{v, err})
	return v, err
}

// decodeTrustDocument returns the trust policy's JSON: the document as given, or URL-decoded when it
// was recorded as GetRole sends it on the wire (%7B…).
func decodeTrustDocument(doc string) string {
	doc = strings.TrimSpace(doc)
	if strings.HasPrefix(doc, "%7B") || strings.HasPrefix(doc, "%7b") {
		if d, err := url.QueryUnescape(doc); err == nil {
			return d
		}
	}
	return doc
}

// EC2Policy is the trust policy that lets EC2 assume a role in the partition.
func EC2Policy(partition string) string {
	return `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"` + EC2Service(partition) + `"},"Action":"sts:AssumeRole"}]}`
}

// EC2Service is the EC2 service principal of a partition.
func EC2Service(partition string) string {
	if partition == "aws-cn" {
		return "ec2.amazonaws.com.cn"
	}
	return "ec2.amazonaws.com"
}

// ARNPartition returns the partition of an ARN (arn:aws-cn:… → aws-cn), "aws" when it has none.
func ARNPartition(arn string) string {
	parts := strings.SplitN(arn, ":", 3)
	if len(parts) < 3 || parts[0] != "arn" || parts[1] == "" {
		return "aws"
	}
	return parts[1]
}
