package fakeaws

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
)

// The reading of a role's policies (query protocol): ListRolePolicies and GetRolePolicy (its inline
// policies: the documents WithPolicies gives it, named policy-1, policy-2, …), ListAttachedRolePolicies
// (none: every document here is inline), and GetPolicy and GetPolicyVersion for its permissions
// boundary, a customer managed policy named <role>-boundary whose only version is v1. GetRole names the
// boundary.
//
// A principal the snapshot's simulations section answers for has answers that are a table, not the
// consequence of documents: the fake cannot show documents that would give them, so it refuses to
// (AccessDenied), as IAM refuses a caller without iam:ListRolePolicies. A known role without policies
// has none (the simulator denies it everything implicitly, which is what no policy means).

// boundaryVersion is the only version of a permissions boundary.
const boundaryVersion = "v1"

type iamPolicy struct {
	PolicyName                    string
	PolicyID                      string `xml:"PolicyId"`
	Arn                           string
	Path                          string
	DefaultVersionID              string `xml:"DefaultVersionId"`
	AttachmentCount               int
	PermissionsBoundaryUsageCount int
	IsAttachable                  bool
}

type iamPolicyVersion struct {
	Document         string
	VersionID        string `xml:"VersionId"`
	IsDefaultVersion bool
}

type iamBoundary struct {
	PermissionsBoundaryType string
	PermissionsBoundaryArn  string
}

// roleWithPolicies finds the principal of a role name (case-insensitively, as IAM names are): its ARN
// and policies (nil for none); ok is false when IAM knows no such role.
func roleWithPolicies(wd *world, name string) (arn string, pp *principalPolicies, ok bool) {
	for a := range wd.principals {
		if kind, n := principalName(a); kind == "role" && strings.EqualFold(n, name) {
			arn, ok = a, true
			if p := wd.policies[a]; p != nil {
				return a, p, true
			}
		}
	}
	if !ok {
		if r, found := findRole(wd, name); found {
			return iamRoleOf(wd, r).Arn, nil, true
		}
	}
	return arn, nil, ok
}

// boundaryARN is the ARN of the permissions boundary of the role principal.
func boundaryARN(principal string) string {
	prefix, _, _ := strings.Cut(principal, ":role/")
	_, name := principalName(principal)
	return prefix + ":policy/" + name + "-boundary"
}

// readablePolicies answers for a role whose policies are asked: its principal and policies, or the
// error IAM would give.
func readablePolicies(r *request, wd *world) (string, *principalPolicies, error) {
	name, err := iamName(r, "RoleName", 64)
	if err != nil {
		return "", nil, err
	}
	arn, pp, ok := roleWithPolicies(wd, name)
	if !ok {
		return "", nil, noSuchRole(name)
	}
	if wd.tabled[arn] {
		// With policies too, the table wins for its questions: the documents alone would mislead.
		return "", nil, denied(r, wd)
	}
	if pp == nil {
		pp = &principalPolicies{}
	}
	return arn, pp, nil
}

func (iamAPI) listRolePolicies(w http.ResponseWriter, r *request, wd *world) error {
	_, pp, err := readablePolicies(r, wd)
	if err != nil {
		return err
	}
	size, offset, err := pageParams(r, "iam:ListRolePolicies")
	if err != nil {
		return err
	}
	names := make([]string, len(pp.identity))
	for i := range pp.identity {
		names[i] = inlineName(i)
	}
	got, next := page("iam:ListRolePolicies", names, offset, size)
	return writeQuery(w, r, iamNamespace, struct {
		XMLName     xml.Name `xml:"ListRolePoliciesResult"`
		PolicyNames members[string]
		IsTruncated bool
		Marker      string `xml:",omitempty"`
	}{PolicyNames: members[string]{Member: got}, IsTruncated: next != "", Marker: next})
}

func (iamAPI) getRolePolicy(w http.ResponseWriter, r *request, wd *world) error {
	_, pp, err := readablePolicies(r, wd)
	if err != nil {
		return err
	}
	name := r.Form.Get("PolicyName")
	for i, d := range pp.identity {
		if inlineName(i) == name {
			return writeQuery(w, r, iamNamespace, struct {
				XMLName        xml.Name `xml:"GetRolePolicyResult"`
				RoleName       string
				PolicyName     string
				PolicyDocument string
			}{RoleName: r.Form.Get("RoleName"), PolicyName: name, PolicyDocument: rfc3986Escape(d.text)})
		}
	}
	return &apiError{status: http.StatusNotFound, code: "NoSuchEntity", message: "The role policy with name " + name + " cannot be found."}
}

func (iamAPI) listAttachedRolePolicies(w http.ResponseWriter, r *request, wd *world) error {
	if _, _, err := readablePolicies(r, wd); err != nil {
		return err
	}
	return writeQuery(w, r, iamNamespace, struct {
		XMLName          xml.Name `xml:"ListAttachedRolePoliciesResult"`
		AttachedPolicies members[struct{ PolicyName, PolicyArn string }]
		IsTruncated      bool
	}{})
}

// boundaryOf finds the principal whose permissions boundary has that ARN.
func boundaryOf(wd *world, arn string) (*policyDoc, bool) {
	for principal, pp := range wd.policies {
		if pp.boundary != nil && boundaryARN(principal) == arn && !wd.tabled[principal] {
			return pp.boundary, true
		}
	}
	return nil, false
}

func (iamAPI) getPolicy(w http.ResponseWriter, r *request, wd *world) error {
	arn := r.Form.Get("PolicyArn")
	if _, ok := boundaryOf(wd, arn); !ok {
		return &apiError{status: http.StatusNotFound, code: "NoSuchEntity", message: "Policy " + arn + " does not exist or is not attachable."}
	}
	return writeQuery(w, r, iamNamespace, struct {
		XMLName xml.Name `xml:"GetPolicyResult"`
		Policy  iamPolicy
	}{Policy: iamPolicy{PolicyName: arn[strings.LastIndex(arn, "/")+1:], PolicyID: uniqueID("ANPA", arn), Arn: arn, Path: "/",
		DefaultVersionID: boundaryVersion, PermissionsBoundaryUsageCount: 1, IsAttachable: true}})
}

func (iamAPI) getPolicyVersion(w http.ResponseWriter, r *request, wd *world) error {
	arn, version := r.Form.Get("PolicyArn"), r.Form.Get("VersionId")
	d, ok := boundaryOf(wd, arn)
	if !ok || version != boundaryVersion {
		return &apiError{status: http.StatusNotFound, code: "NoSuchEntity", message: "Policy " + arn + " version " + version + " does not exist or is not attachable."}
	}
	return writeQuery(w, r, iamNamespace, struct {
		XMLName       xml.Name `xml:"GetPolicyVersionResult"`
		PolicyVersion iamPolicyVersion
	}{PolicyVersion: iamPolicyVersion{Document: rfc3986Escape(d.text), VersionID: boundaryVersion, IsDefaultVersion: true}})
}

// boundaryOfRole is the PermissionsBoundary GetRole names for a role with a boundary, nil without.
func boundaryOfRole(wd *world, roleARN string) *iamBoundary {
	pp := wd.policies[roleARN]
	if pp == nil || pp.boundary == nil || wd.tabled[roleARN] {
		return nil
	}
	return &iamBoundary{PermissionsBoundaryType: "Policy", PermissionsBoundaryArn: boundaryARN(roleARN)}
}

// inlineName names a principal's i-th document as an inline policy.
func inlineName(i int) string { return "policy-" + strconv.Itoa(i+1) }

// pageParams reads MaxItems (1 to 1000, default 100) and Marker as IAM's list operations take them.
func pageParams(r *request, op string) (size, offset int, err error) {
	size = 100
	if v := r.Form.Get("MaxItems"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return 0, 0, badRequest("ValidationError", "1 validation error detected: Value '%s' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 1000", v)
		}
		size = n
	}
	offset, ok := pageOffset(op, r.Form.Get("Marker"))
	if !ok {
		return 0, 0, badRequest("ValidationError", "Invalid Marker %q.", r.Form.Get("Marker"))
	}
	return size, offset, nil
}
