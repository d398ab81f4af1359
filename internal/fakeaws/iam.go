package fakeaws

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// IAM and STS speak the query protocol: a form POST with Action and Version, answered by
// <ActionResponse xmlns=…><ActionResult>…</ActionResult><ResponseMetadata>…</ResponseMetadata>, lists as
// <member> elements, timestamps as ISO 8601, and errors as <ErrorResponse><Error><Type/><Code/><Message/>
// </Error><RequestId/></ErrorResponse>.
const (
	iamVersion   = "2010-05-08"
	iamNamespace = "https://iam.amazonaws.com/doc/2010-05-08/"
	stsVersion   = "2011-06-15"
	stsNamespace = "https://sts.amazonaws.com/doc/2011-06-15/"
)

// queryEnvelope is the answer of a query-protocol operation; Result's element name is its XMLName.
type queryEnvelope struct {
	XMLName   xml.Name
	Result    any
	RequestID string `xml:"ResponseMetadata>RequestId"`
}

type queryErrorResponse struct {
	XMLName xml.Name
	Error   struct {
		Type    string
		Code    string
		Message string
	}
	RequestID string `xml:"RequestId"`
}

// members is an IAM list: <member> elements inside the list's own element.
type members[T any] struct {
	Member []T `xml:"member"`
}

// queryOperation reads Action from a query-protocol form; op stays "" when the form names none.
func queryOperation(r *request, supported ...string) error {
	form, err := formValues(r)
	if err != nil {
		return err
	}
	r.op = form.Get("Action")
	if r.op == "" {
		return badRequest("MissingAction", "The request must contain the parameter Action.")
	}
	for _, s := range supported {
		if r.op == s {
			return nil
		}
	}
	return badRequest("InvalidAction", "Could not find operation %s for version %s (fakeaws serves %s)", r.op, form.Get("Version"), strings.Join(supported, ", "))
}

// writeQuery writes a query-protocol answer to action with result (a struct whose XMLName is
// "<Action>Result").
func writeQuery(w http.ResponseWriter, r *request, namespace string, result any) error {
	return writeXML(w, http.StatusOK, queryEnvelope{XMLName: xml.Name{Space: namespace, Local: r.op + "Response"}, Result: result, RequestID: r.id})
}

func failQuery(w http.ResponseWriter, r *request, namespace string, e *apiError) {
	out := queryErrorResponse{XMLName: xml.Name{Space: namespace, Local: "ErrorResponse"}, RequestID: r.id}
	out.Error.Type = "Sender"
	if e.status >= 500 {
		out.Error.Type = "Receiver"
	}
	out.Error.Code, out.Error.Message = e.code, e.message
	_ = writeXML(w, e.status, out)
}

// writeXML writes an XML answer with its declaration.
func writeXML(w http.ResponseWriter, status int, v any) error {
	body, err := xml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode answer: %w", err)
	}
	body = append([]byte(xml.Header), body...)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}

// iamAPI serves GetRole, GetInstanceProfile, ListInstanceProfilesForRole, SimulatePrincipalPolicy
// (simulate.go) and the reading of a role's policies (rolepolicies.go).
type iamAPI struct{}

type iamRole struct {
	Path       string
	RoleName   string
	RoleID     string `xml:"RoleId"`
	Arn        string
	CreateDate string `xml:",omitempty"`
	// AssumeRolePolicyDocument is the trust policy, percent-encoded as IAM sends it (the SDK does not
	// decode it).
	AssumeRolePolicyDocument string `xml:",omitempty"`
	MaxSessionDuration       int
	PermissionsBoundary      *iamBoundary `xml:",omitempty"`
}

type iamInstanceProfile struct {
	Path                string
	InstanceProfileName string
	InstanceProfileID   string `xml:"InstanceProfileId"`
	Arn                 string
	CreateDate          string `xml:",omitempty"`
	Roles               members[iamRole]
}

// IAM names: what IAM's own validation accepts (an ARN in RoleName is a ValidationError, not a miss).
var iamNameRE = regexp.MustCompile(`^[\w+=,.@-]+$`)

func (iamAPI) parse(r *request) error {
	return queryOperation(r, "GetRole", "GetInstanceProfile", "ListInstanceProfilesForRole", "SimulatePrincipalPolicy",
		"ListRolePolicies", "GetRolePolicy", "ListAttachedRolePolicies", "GetPolicy", "GetPolicyVersion")
}

func (a iamAPI) serve(w http.ResponseWriter, r *request, wd *world) error {
	switch r.op {
	case "GetRole":
		name, err := iamName(r, "RoleName", 64)
		if err != nil {
			return err
		}
		if wd.cf.Roles == nil {
			return denied(r, wd)
		}
		role, ok := findRole(wd, name)
		if !ok {
			return noSuchRole(name)
		}
		return writeQuery(w, r, iamNamespace, struct {
			XMLName xml.Name `xml:"GetRoleResult"`
			Role    iamRole
		}{Role: iamRoleOf(wd, role)})
	case "GetInstanceProfile":
		name, err := iamName(r, "InstanceProfileName", 128)
		if err != nil {
			return err
		}
		if wd.cf.InstanceProfiles == nil {
			return denied(r, wd)
		}
		for _, p := range *wd.cf.InstanceProfiles {
			if strings.EqualFold(p.Name, name) {
				return writeQuery(w, r, iamNamespace, struct {
					XMLName         xml.Name `xml:"GetInstanceProfileResult"`
					InstanceProfile iamInstanceProfile
				}{InstanceProfile: iamProfileOf(wd, p)})
			}
		}
		return &apiError{status: http.StatusNotFound, code: "NoSuchEntity", message: "Instance Profile " + name + " cannot be found."}
	case "ListInstanceProfilesForRole":
		return a.listProfilesForRole(w, r, wd)
	case "SimulatePrincipalPolicy":
		return a.simulatePrincipalPolicy(w, r, wd)
	case "ListRolePolicies":
		return a.listRolePolicies(w, r, wd)
	case "GetRolePolicy":
		return a.getRolePolicy(w, r, wd)
	case "ListAttachedRolePolicies":
		return a.listAttachedRolePolicies(w, r, wd)
	case "GetPolicy":
		return a.getPolicy(w, r, wd)
	case "GetPolicyVersion":
		return a.getPolicyVersion(w, r, wd)
	}
	return fmt.Errorf("iam: unhandled operation %s", r.op)
}

func (iamAPI) listProfilesForRole(w http.ResponseWriter, r *request, wd *world) error {
	name, err := iamName(r, "RoleName", 64)
	if err != nil {
		return err
	}
	if wd.cf.InstanceProfiles == nil {
		return denied(r, wd)
	}
	if wd.cf.Roles != nil {
		if _, ok := findRole(wd, name); !ok {
			return noSuchRole(name)
		}
	}
	size, offset, err := pageParams(r, "iam:ListInstanceProfilesForRole")
	if err != nil {
		return err
	}
	var all []iamInstanceProfile
	for _, p := range *wd.cf.InstanceProfiles {
		for _, rn := range p.Roles {
			if strings.EqualFold(rn, name) {
				all = append(all, iamProfileOf(wd, p))
				break
			}
		}
	}
	got, next := page("iam:ListInstanceProfilesForRole", all, offset, size)
	return writeQuery(w, r, iamNamespace, struct {
		XMLName          xml.Name `xml:"ListInstanceProfilesForRoleResult"`
		InstanceProfiles members[iamInstanceProfile]
		IsTruncated      bool
		Marker           string `xml:",omitempty"`
	}{InstanceProfiles: members[iamInstanceProfile]{Member: got}, IsTruncated: next != "", Marker: next})
}

// iamName reads a required IAM name parameter and validates it as IAM does.
func iamName(r *request, param string, maxLen int) (string, error) {
	v := r.Form.Get(param)
	field := strings.ToLower(param[:1]) + param[1:]
	if v == "" {
		return "", badRequest("ValidationError", "1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", field)
	}
	if len(v) > maxLen || !iamNameRE.MatchString(v) {
		return "", badRequest("ValidationError", `1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [\w+=,.@-]+ and have length between 1 and %d`, v, field, maxLen)
	}
	return v, nil
}

func noSuchRole(name string) *apiError {
	return &apiError{status: http.StatusNotFound, code: "NoSuchEntity", message: "The role with name " + name + " cannot be found."}
}

// findRole looks a role up by name as IAM does: names are unique case-insensitively. A role given
// policies (WithPolicies) exists too, though the snapshot's roles do not list it.
func findRole(wd *world, name string) (facts.Role, bool) {
	if wd.cf.Roles != nil {
		for _, r := range *wd.cf.Roles {
			if strings.EqualFold(r.Name, name) {
				return r, true
			}
		}
	}
	for a := range wd.policies {
		if kind, n := principalName(a); kind == "role" && strings.EqualFold(n, name) {
			return facts.Role{Name: n, ARN: a}, true
		}
	}
	return facts.Role{}, false
}

func iamRoleOf(wd *world, r facts.Role) iamRole {
	arn := r.ARN
	if arn == "" {
		arn = wd.arn("iam", "", wd.account, "role/"+r.Name)
	}
	path := r.Path
	if path == "" {
		path = iamPath(arn, r.Name)
	}
	return iamRole{Path: path, RoleName: r.Name, RoleID: uniqueID("AROA", arn), Arn: arn, CreateDate: isoTime(r.CreateDate),
		AssumeRolePolicyDocument: rfc3986Escape(r.AssumeRolePolicyDocument), MaxSessionDuration: 3600, PermissionsBoundary: boundaryOfRole(wd, arn)}
}

// rfc3986Escape percent-encodes a policy document as IAM returns it: everything but the unreserved
// characters of RFC 3986 (letters, digits, "-._~"), spaces as %20.
func rfc3986Escape(s string) string {
	// url.QueryEscape leaves exactly the unreserved characters and writes a space as "+" (a "+" of s
	// is %2B), so every "+" left is a space.
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

func iamProfileOf(wd *world, p facts.InstanceProfile) iamInstanceProfile {
	arn := p.ARN
	if arn == "" {
		arn = wd.arn("iam", "", wd.account, "instance-profile/"+p.Name)
	}
	out := iamInstanceProfile{Path: iamPath(arn, p.Name), InstanceProfileName: p.Name, InstanceProfileID: uniqueID("AIPA", arn), Arn: arn}
	out.Roles.Member = []iamRole{}
	for _, name := range p.Roles {
		role, ok := findRole(wd, name)
		if !ok {
			role = facts.Role{Name: name}
		}
		out.Roles.Member = append(out.Roles.Member, iamRoleOf(wd, role))
	}
	return out
}

// iamPath returns the IAM path inside an ARN: "/" for …:role/Name, "/a/b/" for …:role/a/b/Name.
func iamPath(arn, name string) string {
	_, res, _ := strings.Cut(arn, ":iam::")
	if i := strings.Index(res, "/"); i >= 0 {
		return strings.TrimSuffix(res[i:], name)
	}
	return "/"
}

// isoTime formats a time as IAM does; the zero time (not in the snapshot) is left out.
func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (iamAPI) fail(w http.ResponseWriter, r *request, e *apiError) {
	failQuery(w, r, iamNamespace, e)
}

func (iamAPI) resource(r *request, wd *world) string {
	switch r.op {
	case "GetRole", "ListInstanceProfilesForRole", "ListRolePolicies", "GetRolePolicy", "ListAttachedRolePolicies":
		if role, ok := findRole(wd, r.Form.Get("RoleName")); ok && role.ARN != "" {
			return role.ARN
		}
		return wd.arn("iam", "", wd.account, "role/"+r.Form.Get("RoleName"))
	case "GetInstanceProfile":
		return wd.arn("iam", "", wd.account, "instance-profile/"+r.Form.Get("InstanceProfileName"))
	case "SimulatePrincipalPolicy":
		return r.Form.Get("PolicySourceArn")
	case "GetPolicy", "GetPolicyVersion":
		return r.Form.Get("PolicyArn")
	}
	return ""
}

// stsAPI serves GetCallerIdentity.
type stsAPI struct{}

func (stsAPI) parse(r *request) error { return queryOperation(r, "GetCallerIdentity") }

func (stsAPI) serve(w http.ResponseWriter, r *request, wd *world) error {
	account := wd.account
	if parts := strings.SplitN(wd.caller, ":", 6); len(parts) == 6 && parts[4] != "" {
		account = parts[4]
	}
	userID := uniqueID("AIDA", wd.caller)
	if _, role, ok := strings.Cut(wd.caller, ":assumed-role/"); ok {
		roleName, session, _ := strings.Cut(role, "/")
		roleARN := wd.arn("iam", "", account, "role/"+roleName)
		if r, ok := findRole(wd, roleName); ok && r.ARN != "" {
			roleARN = r.ARN
		}
		userID = uniqueID("AROA", roleARN) + ":" + session // the RoleId GetRole gives
	}
	return writeQuery(w, r, stsNamespace, struct {
		XMLName xml.Name `xml:"GetCallerIdentityResult"`
		Arn     string
		UserID  string `xml:"UserId"`
		Account string
	}{Arn: wd.caller, UserID: userID, Account: account})
}

func (stsAPI) fail(w http.ResponseWriter, r *request, e *apiError) { failQuery(w, r, stsNamespace, e) }

func (stsAPI) resource(*request, *world) string { return "" }
