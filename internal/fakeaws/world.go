package fakeaws

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// Defaults for a snapshot without a cluster section (or with empty fields in it).
const (
	DefaultAccountID = "123456789012"
	DefaultRegion    = "us-east-1"
	DefaultPartition = "aws"
)

// world is a snapshot plus what the fake derives from it once: identity, the route tables EC2 would
// hold for the snapshot's subnets, the principals IAM knows, and the cluster's Pod Identity associations.
type world struct {
	cf        *facts.ClusterFacts
	account   string
	region    string
	partition string
	caller    string
	tables    []routeTable
	// policies are the principals' identity policies (WithPolicies), shared by every world.
	policies map[string]*principalPolicies
	// simulations indexes the snapshot's simulations by SimulationQuestion.Key (nil: section absent).
	simulations map[string]*facts.Simulation
	// principals are the ARNs SimulatePrincipalPolicy knows.
	principals map[string]bool
	// tabled are the principals the simulations section answers for: their answers are a table, not
	// the consequence of documents, so the fake cannot show their policies.
	tabled map[string]bool
	// associations are the cluster's Pod Identity associations (nil: unknown).
	associations []podIdentityAssociation
}

func newWorld(cf *facts.ClusterFacts, caller string, policies map[string]*principalPolicies) *world {
	wd := &world{cf: cf, account: DefaultAccountID, region: DefaultRegion, partition: DefaultPartition, policies: policies}
	if c := cf.Cluster; c != nil {
		if c.AccountID != "" {
			wd.account = c.AccountID
		}
		if c.Region != "" {
			wd.region = c.Region
		}
		if c.Partition != "" {
			wd.partition = c.Partition
		}
	}
	wd.caller = caller
	if wd.caller == "" {
		wd.caller = "arn:" + wd.partition + ":sts::" + wd.account + ":assumed-role/karpenter-guard/fakeaws"
	}
	wd.deriveNetwork()
	wd.derivePrincipals()
	wd.derivePodIdentity()
	return wd
}

// derivePrincipals indexes the simulations section and lists the principals IAM would find: the
// snapshot's roles, the controller's and aws-node's roles, the principals given policies, and those the
// simulations section answers for (it could not hold answers for a principal that does not exist).
func (wd *world) derivePrincipals() {
	cf := wd.cf
	wd.principals = map[string]bool{}
	if cf.Roles != nil {
		for _, r := range *cf.Roles {
			wd.principals[iamRoleOf(wd, r).Arn] = true
		}
	}
	if kc := cf.KarpenterController; kc != nil && kc.RoleARN != "" {
		wd.principals[kc.RoleARN] = true
	}
	if cni := cf.VPCCNI; cni != nil && cni.RoleARN != "" {
		wd.principals[cni.RoleARN] = true
	}
	for arn := range wd.policies {
		wd.principals[arn] = true
	}
	if cf.Simulations != nil {
		wd.simulations = make(map[string]*facts.Simulation, len(*cf.Simulations))
		for i := range *cf.Simulations {
			sim := &(*cf.Simulations)[i]
			wd.principals[sim.Principal] = true
			if wd.tabled == nil {
				wd.tabled = map[string]bool{}
			}
			wd.tabled[sim.Principal] = true
			if k := sim.Question().Key(); wd.simulations[k] == nil {
				wd.simulations[k] = sim
			}
		}
	}
}

// arn builds an ARN of this world's partition.
func (wd *world) arn(service, region, account, resource string) string {
	return "arn:" + wd.partition + ":" + service + ":" + region + ":" + account + ":" + resource
}

// routeTable is an EC2 route table: one a snapshot's subnets name (routeTableID and routes), or one the
// fake derives for subnets whose routes the snapshot does not give.
type routeTable struct {
	id      string
	vpcID   string
	main    bool
	routes  []facts.Route // the local route first; Target "local" is EC2's GatewayId "local"
	subnets []string      // explicitly associated subnets
}

// deriveNetwork builds the route tables EC2 would answer with, so that a live provider reading
// DescribeRouteTables (the table explicitly associated with a subnet, else the VPC's main table) finds
// each subnet's snapshot routeTableID, routes and `public` flag.
//
// A table a subnet names is served with exactly the routes the snapshot gives (after a local route),
// explicitly associated with every subnet that names it; the first subnet naming it gives its routes.
// For subnets without a routeTableID (snapshots older than routes) the fake derives, per VPC, a main
// table routing 0.0.0.0/0 to a NAT gateway, which private subnets use implicitly (no association of
// their own, as in most VPCs), and a table routing 0.0.0.0/0 to an internet gateway, explicitly
// associated with each public subnet. A live provider then knows routes such a snapshot does not.
func (wd *world) deriveNetwork() {
	var subnets []facts.Subnet
	if wd.cf.Subnets != nil {
		subnets = *wd.cf.Subnets
	}
	vpcs := map[string]bool{}
	if c := wd.cf.Cluster; c != nil && c.VPCID != "" && wd.cf.Subnets != nil {
		vpcs[c.VPCID] = true
	}
	for _, s := range subnets {
		if s.VPCID != "" {
			vpcs[s.VPCID] = true
		}
	}
	ids := make([]string, 0, len(vpcs))
	for v := range vpcs {
		ids = append(ids, v)
	}
	sort.Strings(ids)
	local := map[string]facts.Route{}
	for n, vpc := range ids {
		local[vpc] = facts.Route{Destination: fmt.Sprintf("10.%d.0.0/16", n%256), Target: "local", State: facts.RouteActive}
	}
	named := map[string]*routeTable{}
	var order []*routeTable
	for _, s := range subnets {
		if s.RouteTableID == "" {
			continue
		}
		t := named[s.RouteTableID]
		if t == nil {
			t = &routeTable{id: s.RouteTableID, vpcID: s.VPCID}
			if l, ok := local[s.VPCID]; ok { // a subnet without a VPC has no block to route locally
				t.routes = append(t.routes, l)
			}
			t.routes = append(t.routes, s.Routes...)
			named[s.RouteTableID] = t
			order = append(order, t)
		}
		t.subnets = append(t.subnets, s.ID)
	}
	for _, vpc := range ids {
		main := routeTable{id: fakeID("rtb-", vpc, "main"), vpcID: vpc, main: true,
			routes: []facts.Route{local[vpc], {Destination: "0.0.0.0/0", Target: fakeID("nat-", vpc), State: facts.RouteActive}}}
		public := routeTable{id: fakeID("rtb-", vpc, "public"), vpcID: vpc,
			routes: []facts.Route{local[vpc], {Destination: "0.0.0.0/0", Target: fakeID("igw-", vpc), State: facts.RouteActive}}}
		for _, s := range subnets {
			if s.VPCID == vpc && s.Public && s.RouteTableID == "" {
				public.subnets = append(public.subnets, s.ID)
			}
		}
		wd.tables = append(wd.tables, main)
		if len(public.subnets) > 0 {
			wd.tables = append(wd.tables, public)
		}
	}
	for _, t := range order {
		wd.tables = append(wd.tables, *t)
	}
}

// fakeID returns a stable AWS-looking id: prefix plus 17 hex digits derived from parts.
func fakeID(prefix string, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(sum[:])[:17]
}

// uniqueID returns a stable IAM unique id (AROA…, AIPA…): prefix plus 17 upper-case characters.
func uniqueID(prefix string, parts ...string) string {
	return prefix + strings.ToUpper(fakeID("", parts...))
}

// Pagination tokens are opaque to clients, as AWS's are; they name the operation so that a token of one
// operation is refused by another.
func pageToken(op string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("fakeaws/" + op + "/" + strconv.Itoa(offset)))
}

// pageOffset decodes a pagination token; "" is the first page.
func pageOffset(op, token string) (int, bool) {
	if token == "" {
		return 0, true
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(string(raw), "fakeaws/"+op+"/")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

// page returns the page of all starting at offset with at most size items (size <= 0: all), and the
// token of the next page ("" on the last page).
func page[T any](op string, all []T, offset, size int) ([]T, string) {
	if offset > len(all) {
		offset = len(all)
	}
	rest := all[offset:]
	if size <= 0 || size >= len(rest) {
		return rest, ""
	}
	return rest[:size], pageToken(op, offset+size)
}

// badRequest is a 400 error.
func badRequest(code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: code, message: fmt.Sprintf(format, args...)}
}
