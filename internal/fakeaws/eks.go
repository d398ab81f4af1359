package fakeaws

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// EKS speaks REST-JSON: the operation is the method and path, parameters are path labels and query
// strings, errors carry their code in the X-Amzn-ErrorType header and {"message": …} in the body, and
// timestamps are epoch seconds as JSON numbers.
//
//	GET /clusters/{name}                                  DescribeCluster
//	GET /clusters/{name}/access-entries?maxResults&nextToken ListAccessEntries
//	GET /clusters/{name}/access-entries/{principalArn}    DescribeAccessEntry (ARN percent-encoded)
//	GET /clusters/{name}/pod-identity-associations…       ListPodIdentityAssociations and
//	                                                      DescribePodIdentityAssociation (podidentity.go)
type eksAPI struct{}

// eksPath returns the percent-decoded path segments of an EKS request. The SDK encodes ":" and "/" of
// a principal ARN inside its segment, so segments are split before decoding.
func eksPath(r *request) ([]string, error) {
	raw := strings.Trim(r.URL.EscapedPath(), "/")
	segs := strings.Split(raw, "/")
	for i, s := range segs {
		d, err := url.PathUnescape(s)
		if err != nil {
			return nil, badRequest("InvalidParameterException", "malformed path segment %q: %v", s, err)
		}
		segs[i] = d
	}
	return segs, nil
}

func (eksAPI) parse(r *request) error {
	segs, err := eksPath(r)
	if err != nil {
		return err
	}
	if r.Method == http.MethodGet && len(segs) >= 2 && segs[0] == "clusters" {
		switch {
		case len(segs) == 2:
			r.op = "DescribeCluster"
		case len(segs) == 3 && segs[2] == "access-entries":
			r.op = "ListAccessEntries"
		case len(segs) == 4 && segs[2] == "access-entries":
			r.op = "DescribeAccessEntry"
		case len(segs) == 3 && segs[2] == "pod-identity-associations":
			r.op = "ListPodIdentityAssociations"
		case len(segs) == 4 && segs[2] == "pod-identity-associations":
			r.op = "DescribePodIdentityAssociation"
		}
	}
	if r.op == "" {
		return &apiError{status: http.StatusNotFound, code: "UnknownOperationException",
			message: fmt.Sprintf("fakeaws serves only DescribeCluster, ListAccessEntries, DescribeAccessEntry, ListPodIdentityAssociations and DescribePodIdentityAssociation of EKS, not %s %s", r.Method, r.URL.EscapedPath())}
	}
	return nil
}

// eksCluster and the types below are the JSON shapes of EKS's answers (member names as on the wire).
type eksCluster struct {
	Name               string           `json:"name"`
	ARN                string           `json:"arn"`
	Version            string           `json:"version,omitempty"`
	Endpoint           string           `json:"endpoint"`
	Status             string           `json:"status"`
	PlatformVersion    string           `json:"platformVersion"`
	ResourcesVpcConfig *eksVPCConfig    `json:"resourcesVpcConfig,omitempty"`
	AccessConfig       *eksAccessConfig `json:"accessConfig,omitempty"`
	// KubernetesNetworkConfig carries the cluster's ipFamily.
	KubernetesNetworkConfig *eksKubernetesNetworkConfig `json:"kubernetesNetworkConfig,omitempty"`
}

// eksVPCConfig is resourcesVpcConfig. EKS always sends every member; the fake leaves out those the
// snapshot does not know, so that a live provider knows exactly what the snapshot knows.
type eksVPCConfig struct {
	VPCID                  string   `json:"vpcId,omitempty"`
	SubnetIDs              []string `json:"subnetIds"`
	SecurityGroupIDs       []string `json:"securityGroupIds"`
	ClusterSecurityGroupID string   `json:"clusterSecurityGroupId,omitempty"`
	EndpointPublicAccess   *bool    `json:"endpointPublicAccess,omitempty"`
	EndpointPrivateAccess  *bool    `json:"endpointPrivateAccess,omitempty"`
	PublicAccessCidrs      []string `json:"publicAccessCidrs,omitempty"`
}

type eksKubernetesNetworkConfig struct {
	IPFamily string `json:"ipFamily"`
}

type eksAccessConfig struct {
	AuthenticationMode string `json:"authenticationMode"`
}

type eksAccessEntry struct {
	ClusterName      string            `json:"clusterName"`
	PrincipalARN     string            `json:"principalArn"`
	AccessEntryARN   string            `json:"accessEntryArn"`
	KubernetesGroups []string          `json:"kubernetesGroups"`
	CreatedAt        *float64          `json:"createdAt,omitempty"`
	ModifiedAt       *float64          `json:"modifiedAt,omitempty"`
	Tags             map[string]string `json:"tags"`
	Username         string            `json:"username,omitempty"`
	Type             string            `json:"type"`
}

func (a eksAPI) serve(w http.ResponseWriter, r *request, wd *world) error {
	segs, _ := eksPath(r) // parse checked it
	c := wd.cf.Cluster
	if c == nil {
		return denied(r, wd)
	}
	if segs[1] != c.Name {
		return &apiError{status: http.StatusNotFound, code: "ResourceNotFoundException", message: "No cluster found for name: " + segs[1] + "."}
	}
	switch r.op {
	case "DescribeCluster":
		out := eksCluster{
			Name: c.Name, ARN: wd.arn("eks", wd.region, wd.account, "cluster/"+c.Name), Version: c.Version,
			Endpoint:        "https://" + strings.ToUpper(fakeID("", c.Name, wd.account)) + ".gr7." + wd.region + ".eks.amazonaws.com",
			Status:          "ACTIVE",
			PlatformVersion: "eks.1",
		}
		out.ResourcesVpcConfig = vpcConfig(c)
		if c.IPFamily != "" {
			out.KubernetesNetworkConfig = &eksKubernetesNetworkConfig{IPFamily: c.IPFamily}
		}
		if c.AuthenticationMode != "" {
			out.AccessConfig = &eksAccessConfig{AuthenticationMode: c.AuthenticationMode}
		}
		return writeJSON(w, "application/json", r, map[string]any{"cluster": out})
	case "ListAccessEntries":
		return a.listAccessEntries(w, r, wd)
	case "DescribeAccessEntry":
		return a.describeAccessEntry(w, r, wd, segs[3])
	case "ListPodIdentityAssociations":
		return a.listPodIdentityAssociations(w, r, wd)
	case "DescribePodIdentityAssociation":
		return a.describePodIdentityAssociation(w, r, wd, segs[3])
	}
	return fmt.Errorf("eks: unhandled operation %s", r.op)
}

// vpcConfig is the cluster's resourcesVpcConfig: nil when the snapshot knows neither its VPC nor
// anything of its network.
func vpcConfig(c *facts.Cluster) *eksVPCConfig {
	n := c.ClusterNetwork
	if c.VPCID == "" && n.EndpointPublicAccess == nil && n.EndpointPrivateAccess == nil && n.ClusterSecurityGroupID == "" &&
		n.SecurityGroupIDs == nil && n.SubnetIDs == nil && n.PublicAccessCidrs == nil {
		return nil
	}
	v := &eksVPCConfig{VPCID: c.VPCID, SubnetIDs: n.SubnetIDs, SecurityGroupIDs: n.SecurityGroupIDs, ClusterSecurityGroupID: n.ClusterSecurityGroupID,
		EndpointPublicAccess: n.EndpointPublicAccess, EndpointPrivateAccess: n.EndpointPrivateAccess, PublicAccessCidrs: n.PublicAccessCidrs}
	if v.SubnetIDs == nil {
		v.SubnetIDs = []string{}
	}
	if v.SecurityGroupIDs == nil {
		v.SecurityGroupIDs = []string{}
	}
	return v
}

// accessEntries returns the snapshot's entries, or the error EKS answers: 400 in mode CONFIG_MAP (EKS
// does not read access entries there), access denied when the section is unknown.
func (eksAPI) accessEntries(r *request, wd *world) ([]facts.AccessEntry, error) {
	if wd.cf.Cluster.AuthenticationMode == facts.ModeConfigMap {
		return nil, badRequest("InvalidRequestException", "The cluster's authentication mode must be set to one of [API, API_AND_CONFIG_MAP] to perform this operation.")
	}
	if wd.cf.AccessEntries == nil {
		return nil, denied(r, wd)
	}
	return *wd.cf.AccessEntries, nil
}

// eksPage reads the page an EKS list operation asks for: maxResults (1 to 100, default 100) and the
// nextToken of op.
func eksPage(op string, q url.Values) (offset, size int, err error) {
	size = 100
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return 0, 0, badRequest("InvalidParameterException", "maxResults must be between 1 and 100, got %q", v)
		}
		size = n
	}
	offset, ok := pageOffset(op, q.Get("nextToken"))
	if !ok {
		return 0, 0, badRequest("InvalidParameterException", "The nextToken %q is not valid.", q.Get("nextToken"))
	}
	return offset, size, nil
}

func (a eksAPI) listAccessEntries(w http.ResponseWriter, r *request, wd *world) error {
	entries, err := a.accessEntries(r, wd)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	if q.Get("associatedPolicyArn") != "" {
		return badRequest("InvalidParameterException", "fakeaws does not support the associatedPolicyArn filter: the snapshot holds no access policies")
	}
	offset, size, err := eksPage("eks:ListAccessEntries", q)
	if err != nil {
		return err
	}
	arns := make([]string, len(entries))
	for i, e := range entries {
		arns[i] = e.PrincipalARN
	}
	got, next := page("eks:ListAccessEntries", arns, offset, size)
	out := struct {
		AccessEntries []string `json:"accessEntries"`
		NextToken     string   `json:"nextToken,omitempty"`
	}{AccessEntries: got, NextToken: next}
	return writeJSON(w, "application/json", r, out)
}

func (a eksAPI) describeAccessEntry(w http.ResponseWriter, r *request, wd *world, principal string) error {
	entries, err := a.accessEntries(r, wd)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.PrincipalARN != principal {
			continue
		}
		c := wd.cf.Cluster
		out := eksAccessEntry{
			ClusterName: c.Name, PrincipalARN: e.PrincipalARN, Type: e.Type, Username: e.Username,
			AccessEntryARN:   wd.arn("eks", wd.region, wd.account, "access-entry/"+c.Name+"/"+accessEntryPath(e.PrincipalARN)+"/"+fakeUUID(c.Name, e.PrincipalARN)),
			KubernetesGroups: e.KubernetesGroups,
			Tags:             map[string]string{},
		}
		if out.KubernetesGroups == nil {
			out.KubernetesGroups = []string{} // EKS always sends the list
		}
		if !e.CreatedAt.IsZero() {
			t := float64(e.CreatedAt.UnixMilli()) / 1000
			out.CreatedAt, out.ModifiedAt = &t, &t
		}
		return writeJSON(w, "application/json", r, map[string]any{"accessEntry": out})
	}
	return &apiError{status: http.StatusNotFound, code: "ResourceNotFoundException",
		message: "The specified principalArn could not be found. You can view your available access entries with 'list-access-entries'."}
}

// accessEntryPath is the middle of an access entry ARN: "role/ACCOUNT/NAME" for a role principal.
func accessEntryPath(principal string) string {
	// arn:aws:iam::111122223333:role/path/Name
	parts := strings.SplitN(principal, ":", 6)
	if len(parts) < 6 {
		return "unknown"
	}
	kind, rest, _ := strings.Cut(parts[5], "/")
	return kind + "/" + parts[4] + "/" + rest[strings.LastIndex(rest, "/")+1:]
}

// fakeUUID returns a stable UUID-shaped string derived from parts.
func fakeUUID(parts ...string) string {
	h := fakeID("", parts...) + fakeID("", append(parts, "2")...)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func (eksAPI) fail(w http.ResponseWriter, r *request, e *apiError) {
	w.Header().Set("X-Amzn-ErrorType", e.code)
	w.Header().Set("X-Amzn-RequestId", r.id)
	writeJSONStatus(w, "application/json", e.status, map[string]string{"message": e.message})
}

func (eksAPI) resource(r *request, wd *world) string {
	segs, err := eksPath(r)
	if err != nil || len(segs) < 2 {
		return ""
	}
	if r.op == "DescribeAccessEntry" && len(segs) == 4 {
		return wd.arn("eks", wd.region, wd.account, "access-entry/"+segs[1]+"/"+accessEntryPath(segs[3])+"/*")
	}
	if r.op == "DescribePodIdentityAssociation" && len(segs) == 4 {
		return wd.arn("eks", wd.region, wd.account, "podidentityassociation/"+segs[1]+"/"+segs[3])
	}
	return wd.arn("eks", wd.region, wd.account, "cluster/"+segs[1])
}

// writeJSON writes a 200 JSON answer.
func writeJSON(w http.ResponseWriter, contentType string, r *request, v any) error {
	w.Header().Set("X-Amzn-RequestId", r.id)
	return writeJSONStatus(w, contentType, http.StatusOK, v)
}

func writeJSONStatus(w http.ResponseWriter, contentType string, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode answer: %w", err)
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}
