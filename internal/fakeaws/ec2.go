package fakeaws

import (
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// EC2 speaks its own query protocol: a form POST with Action and Version=2016-11-15, lists flattened as
// Name.N (Filter.1.Name, Filter.1.Value.1, Owner.1, SubnetId.1), answers as <ActionResponse xmlns=…>
// with lower-camel elements and lists of <item>, and errors as
// <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>.
//
// Filters follow EC2: filters are ANDed, the values of one filter ORed, values match with * and ?
// wildcards, tag:KEY matches the value of tag KEY, tag-key any key; an unknown filter name is an error.
//
// Besides the Describe calls, the fake answers the account's EBS encryption by default
// (GetEbsEncryptionByDefault, GetEbsDefaultKmsKeyId) from the snapshot's ebsDefaults section.
const (
	ec2Version   = "2016-11-15"
	ec2Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"
)

type ec2API struct{}

// items is an EC2 list: <item> elements inside the list's element, which is sent even when empty.
type items[T any] struct {
	Item []T `xml:"item"`
}

type ec2Tag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type ec2Image struct {
	ImageID            string         `xml:"imageId"`
	ImageLocation      string         `xml:"imageLocation"`
	ImageState         string         `xml:"imageState"`
	ImageOwnerID       string         `xml:"imageOwnerId"`
	CreationDate       string         `xml:"creationDate,omitempty"`
	IsPublic           bool           `xml:"isPublic"`
	Architecture       string         `xml:"architecture"`
	ImageType          string         `xml:"imageType"`
	Name               string         `xml:"name"`
	ImageOwnerAlias    string         `xml:"imageOwnerAlias,omitempty"`
	RootDeviceType     string         `xml:"rootDeviceType"`
	VirtualizationType string         `xml:"virtualizationType"`
	Hypervisor         string         `xml:"hypervisor"`
	TagSet             *items[ec2Tag] `xml:"tagSet,omitempty"`
}

type ec2Subnet struct {
	SubnetID                string         `xml:"subnetId"`
	SubnetArn               string         `xml:"subnetArn"`
	State                   string         `xml:"state"`
	VpcID                   string         `xml:"vpcId"`
	OwnerID                 string         `xml:"ownerId"`
	CidrBlock               string         `xml:"cidrBlock,omitempty"`
	AvailableIPAddressCount *int           `xml:"availableIpAddressCount,omitempty"`
	AvailabilityZone        string         `xml:"availabilityZone"`
	AvailabilityZoneID      string         `xml:"availabilityZoneId,omitempty"`
	DefaultForAz            bool           `xml:"defaultForAz"`
	MapPublicIPOnLaunch     bool           `xml:"mapPublicIpOnLaunch"`
	TagSet                  *items[ec2Tag] `xml:"tagSet,omitempty"`
}

type ec2SecurityGroup struct {
	OwnerID             string                 `xml:"ownerId"`
	GroupID             string                 `xml:"groupId"`
	GroupName           string                 `xml:"groupName"`
	GroupDescription    string                 `xml:"groupDescription"`
	VpcID               string                 `xml:"vpcId"`
	SecurityGroupArn    string                 `xml:"securityGroupArn"`
	IPPermissions       items[ec2IPPermission] `xml:"ipPermissions"`
	IPPermissionsEgress items[ec2IPPermission] `xml:"ipPermissionsEgress"`
	TagSet              *items[ec2Tag]         `xml:"tagSet,omitempty"`
}

type ec2RouteTable struct {
	RouteTableID   string                  `xml:"routeTableId"`
	VpcID          string                  `xml:"vpcId"`
	OwnerID        string                  `xml:"ownerId"`
	RouteSet       items[ec2Route]         `xml:"routeSet"`
	AssociationSet items[ec2RTAssociation] `xml:"associationSet"`
	TagSet         items[ec2Tag]           `xml:"tagSet"`
}

type ec2RTAssociation struct {
	RouteTableAssociationID string `xml:"routeTableAssociationId"`
	RouteTableID            string `xml:"routeTableId"`
	SubnetID                string `xml:"subnetId,omitempty"`
	Main                    bool   `xml:"main"`
	AssociationState        struct {
		State string `xml:"state"`
	} `xml:"associationState"`
}

// ec2Request holds the parameters every supported Describe call shares.
type ec2Request struct {
	filters []ec2Filter
	ids     []string // ImageId.N, SubnetId.N, GroupId.N, RouteTableId.N
	names   []string // GroupName.N
	owners  []string // Owner.N
	size    int      // MaxResults; 0: everything
	offset  int
}

type ec2Filter struct {
	name   string
	values []string
}

// ec2Op describes a supported operation: its id parameter, the filters it knows and MaxResults' range.
type ec2Op struct {
	idParam    string
	idPrefix   string
	filters    []string // names; tag:KEY is always known
	minResults int
	maxResults int
}

var ec2Ops = map[string]ec2Op{
	"DescribeImages": {idParam: "ImageId", idPrefix: "ami-", minResults: 1, maxResults: 1000,
		filters: []string{"architecture", "image-id", "image-type", "is-public", "name", "owner-alias", "owner-id", "state", "tag-key", "tag-value"}},
	"DescribeSubnets": {idParam: "SubnetId", idPrefix: "subnet-", minResults: 5, maxResults: 1000,
		filters: []string{"availability-zone", "cidr-block", "default-for-az", "map-public-ip-on-launch", "owner-id", "state", "subnet-arn", "subnet-id", "tag-key", "tag-value", "vpc-id"}},
	"DescribeSecurityGroups": {idParam: "GroupId", idPrefix: "sg-", minResults: 5, maxResults: 1000,
		filters: []string{"description", "group-id", "group-name", "owner-id", "tag-key", "tag-value", "vpc-id"}},
	"DescribeRouteTables": {idParam: "RouteTableId", idPrefix: "rtb-", minResults: 5, maxResults: 100,
		filters: []string{"association.main", "association.route-table-association-id", "association.route-table-id", "association.subnet-id",
			"owner-id", "route-table-id", "route.destination-cidr-block", "route.gateway-id", "route.nat-gateway-id", "tag-key", "tag-value", "vpc-id"}},
	"DescribeInstanceTypes":         instanceTypesOp,
	"DescribeInstanceTypeOfferings": instanceTypeOfferingsOp,
	"DescribeCapacityReservations":  capacityReservationsOp,
	"DescribeNatGateways":           natGatewaysOp,
	"DescribeVpcEndpoints":          vpcEndpointsOp,
}

// ec2Settings are the operations that read a setting of the account and region: no ids, filters or
// pages.
var ec2Settings = []string{"GetEbsDefaultKmsKeyId", "GetEbsEncryptionByDefault", "DescribeVpcAttribute"}

func (ec2API) parse(r *request) error {
	ops := append(slices.Sorted(maps.Keys(ec2Ops)), ec2Settings...)
	if err := queryOperation(r, ops...); err != nil {
		if e, ok := err.(*apiError); ok && e.code == "InvalidAction" {
			e.message = "The action " + r.op + " is not valid for this web service."
		}
		return err
	}
	if r.Form.Get("DryRun") == "true" {
		return &apiError{status: http.StatusPreconditionFailed, code: "DryRunOperation", message: "Request would have succeeded, but DryRun flag is set."}
	}
	return nil
}

var filterKeyRE = regexp.MustCompile(`^Filter\.(\d+)\.(Name|Value\.(\d+))$`)

// ec2Params reads and validates a Describe call's parameters.
func ec2Params(r *request) (*ec2Request, error) {
	op := ec2Ops[r.op]
	form := r.Form
	p := &ec2Request{ids: flatList(form, op.idParam), owners: flatList(form, "Owner")}
	if r.op == "DescribeSecurityGroups" {
		p.names = flatList(form, "GroupName")
	}
	if len(flatList(form, "ExecutableBy")) > 0 {
		return nil, badRequest("UnsupportedOperation", "fakeaws does not support ExecutableBy: the snapshot holds no launch permissions")
	}
	for _, id := range p.ids {
		if !strings.HasPrefix(id, op.idPrefix) {
			return nil, badRequest(ec2IDError(r.op)+".Malformed", "Invalid id: %q", id)
		}
	}
	// Filters: Filter.N.Name and Filter.N.Value.M, in the order of N and M.
	type partial struct {
		name   string
		values map[int]string
	}
	byN := map[int]*partial{}
	for k, vs := range form {
		m := filterKeyRE.FindStringSubmatch(k)
		if m == nil || len(vs) == 0 {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		f := byN[n]
		if f == nil {
			f = &partial{values: map[int]string{}}
			byN[n] = f
		}
		if m[2] == "Name" {
			f.name = vs[0]
		} else {
			i, _ := strconv.Atoi(m[3])
			f.values[i] = vs[0]
		}
	}
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		f := byN[n]
		if f.name == "" {
			return nil, badRequest("InvalidParameterValue", "The filter 'null' is invalid")
		}
		if !strings.HasPrefix(f.name, "tag:") && !slices.Contains(op.filters, f.name) {
			return nil, badRequest("InvalidParameterValue", "The filter '%s' is invalid", f.name)
		}
		if len(f.values) == 0 {
			return nil, badRequest("InvalidParameterValue", "The filter '%s' has no values", f.name)
		}
		var values []string
		for _, i := range slices.Sorted(maps.Keys(f.values)) {
			values = append(values, f.values[i])
		}
		p.filters = append(p.filters, ec2Filter{name: f.name, values: values})
	}
	if v := form.Get("MaxResults"); v != "" {
		if len(p.ids) > 0 {
			return nil, badRequest("InvalidParameterCombination", "The parameter %ss cannot be used with the parameter maxResults", lowerFirst(op.idParam))
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < op.minResults || n > op.maxResults {
			return nil, badRequest("InvalidParameterValue", "Value ( %s ) for parameter maxResults is invalid. Expecting a value between %d and %d.", v, op.minResults, op.maxResults)
		}
		p.size = n
	}
	offset, ok := pageOffset("ec2:"+r.op, form.Get("NextToken"))
	if !ok {
		return nil, badRequest("InvalidParameterValue", "Invalid value '%s' for nextToken", form.Get("NextToken"))
	}
	p.offset = offset
	return p, nil
}

// flatList reads an EC2 flattened list (Owner.1, Owner.2, …) in index order.
func flatList(form url.Values, name string) []string {
	byIndex := map[int]string{}
	for k, vs := range form {
		rest, ok := strings.CutPrefix(k, name+".")
		if !ok || len(vs) == 0 {
			continue
		}
		if i, err := strconv.Atoi(rest); err == nil {
			byIndex[i] = vs[0]
		}
	}
	var out []string
	for _, i := range slices.Sorted(maps.Keys(byIndex)) {
		out = append(out, byIndex[i])
	}
	return out
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// ec2IDError is the prefix of the id errors of an operation (InvalidSubnetID.NotFound, …).
func ec2IDError(op string) string {
	return map[string]string{"DescribeImages": "InvalidAMIID", "DescribeSubnets": "InvalidSubnetID",
		"DescribeSecurityGroups": "InvalidGroup", "DescribeRouteTables": "InvalidRouteTableID",
		"DescribeNatGateways": "InvalidNatGatewayID", "DescribeVpcEndpoints": "InvalidVpcEndpointId", "DescribeCapacityReservations": "InvalidCapacityReservationId"}[op]
}

// matches reports whether a resource passes every filter; values returns the resource's values for a
// filter name (nil: none, so no value matches).
func (p *ec2Request) matches(values func(name string) []string) bool {
	for _, f := range p.filters {
		have := values(f.name)
		ok := false
		for _, pattern := range f.values {
			for _, v := range have {
				if facts.Wildcard(pattern, v) {
					ok = true
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// tagFilter answers the tag filters: tag:KEY, tag-key and tag-value.
func tagFilter(name string, tags map[string]string) []string {
	if key, ok := strings.CutPrefix(name, "tag:"); ok {
		if v, ok := tags[key]; ok {
			return []string{v}
		}
		return nil
	}
	switch name {
	case "tag-key":
		return slices.Collect(maps.Keys(tags))
	case "tag-value":
		return slices.Collect(maps.Values(tags))
	}
	return nil
}

func tagSet(tags map[string]string) *items[ec2Tag] {
	if len(tags) == 0 {
		return nil
	}
	out := &items[ec2Tag]{}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out.Item = append(out.Item, ec2Tag{Key: k, Value: tags[k]})
	}
	return out
}

// notFound checks that every id asked for exists, as EC2 does: one missing id fails the whole call.
func (p *ec2Request) notFound(op string, exists func(id string) bool) error {
	for _, id := range p.ids {
		if !exists(id) {
			code := ec2IDError(op) + ".NotFound"
			switch op {
			case "DescribeImages":
				return badRequest(code, "The image id '[%s]' does not exist", id)
			case "DescribeSubnets":
				return badRequest(code, "The subnet ID '%s' does not exist", id)
			case "DescribeSecurityGroups":
				return badRequest(code, "The security group '%s' does not exist", id)
			default:
				return badRequest(code, "The routeTable ID '%s' does not exist", id)
			}
		}
	}
	return nil
}

func bools(b bool) []string { return []string{strconv.FormatBool(b)} }

func (a ec2API) serve(w http.ResponseWriter, r *request, wd *world) error {
	switch r.op {
	case "GetEbsEncryptionByDefault":
		return a.ebsEncryptionByDefault(w, r, wd)
	case "GetEbsDefaultKmsKeyId":
		return a.ebsDefaultKMSKeyID(w, r, wd)
	case "DescribeVpcAttribute":
		return a.vpcAttribute(w, r, wd)
	}
	p, err := ec2Params(r)
	if err != nil {
		return err
	}
	switch r.op {
	case "DescribeImages":
		return a.images(w, r, wd, p)
	case "DescribeSubnets":
		return a.subnets(w, r, wd, p)
	case "DescribeSecurityGroups":
		return a.securityGroups(w, r, wd, p)
	case "DescribeRouteTables":
		return a.routeTables(w, r, wd, p)
	case "DescribeInstanceTypes":
		return a.instanceTypes(w, r, wd, p)
	case "DescribeInstanceTypeOfferings":
		return a.instanceTypeOfferings(w, r, wd, p)
	case "DescribeCapacityReservations":
		return a.capacityReservations(w, r, wd, p)
	case "DescribeNatGateways":
		return a.natGateways(w, r, wd, p)
	case "DescribeVpcEndpoints":
		return a.vpcEndpoints(w, r, wd, p)
	}
	return fmt.Errorf("ec2: unhandled operation %s", r.op)
}

func (ec2API) images(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.Images == nil {
		return denied(r, wd)
	}
	all := *wd.cf.Images
	if err := p.notFound(r.op, func(id string) bool {
		return slices.ContainsFunc(all, func(i facts.Image) bool { return i.ID == id })
	}); err != nil {
		return err
	}
	var out []ec2Image
	for _, img := range all {
		if len(p.ids) > 0 && !slices.Contains(p.ids, img.ID) {
			continue
		}
		if len(p.owners) > 0 && !slices.ContainsFunc(p.owners, func(o string) bool { return ownedBy(img, o, wd.account) }) {
			continue
		}
		ok := p.matches(func(name string) []string {
			switch name {
			case "architecture":
				return []string{img.Architecture}
			case "image-id":
				return []string{img.ID}
			case "image-type":
				return []string{"machine"}
			case "is-public":
				return bools(img.OwnerAlias != "")
			case "name":
				return []string{img.Name}
			case "owner-alias":
				if img.OwnerAlias == "" {
					return nil
				}
				return []string{img.OwnerAlias}
			case "owner-id":
				return []string{img.OwnerID}
			case "state":
				return []string{img.State}
			}
			return tagFilter(name, img.Tags)
		})
		if !ok {
			continue
		}
		location := img.OwnerID + "/" + img.Name
		if img.OwnerAlias != "" {
			location = img.OwnerAlias + "/" + img.Name
		}
		out = append(out, ec2Image{
			ImageID: img.ID, ImageLocation: location, ImageState: img.State, ImageOwnerID: img.OwnerID,
			CreationDate: img.CreationDate, IsPublic: img.OwnerAlias != "", Architecture: img.Architecture,
			ImageType: "machine", Name: img.Name, ImageOwnerAlias: img.OwnerAlias,
			RootDeviceType: "ebs", VirtualizationType: "hvm", Hypervisor: "xen", TagSet: tagSet(img.Tags),
		})
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID string          `xml:"requestId"`
		ImagesSet items[ec2Image] `xml:"imagesSet"`
		NextToken string          `xml:"nextToken,omitempty"`
	}{RequestID: r.id, ImagesSet: items[ec2Image]{got}, NextToken: next})
}

// ownedBy applies DescribeImages' Owner.N: self is the caller's account, amazon and aws-marketplace
// are owner aliases, anything else an account id.
func ownedBy(img facts.Image, owner, account string) bool {
	switch owner {
	case "self":
		return img.OwnerID == account
	case "amazon", "aws-marketplace", "aws-backup-vault":
		return img.OwnerAlias == owner
	}
	return img.OwnerID == owner
}

func (ec2API) subnets(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.Subnets == nil {
		return denied(r, wd)
	}
	all := *wd.cf.Subnets
	if err := p.notFound(r.op, func(id string) bool {
		return slices.ContainsFunc(all, func(s facts.Subnet) bool { return s.ID == id })
	}); err != nil {
		return err
	}
	var out []ec2Subnet
	for _, s := range all {
		if len(p.ids) > 0 && !slices.Contains(p.ids, s.ID) {
			continue
		}
		arn := wd.arn("ec2", wd.region, wd.account, "subnet/"+s.ID)
		ok := p.matches(func(name string) []string {
			switch name {
			case "availability-zone":
				return []string{s.AvailabilityZone}
			case "cidr-block":
				if s.CIDRBlock == "" {
					return nil
				}
				return []string{s.CIDRBlock}
			case "default-for-az":
				return bools(false)
			case "map-public-ip-on-launch":
				return bools(s.MapPublicIPOnLaunch)
			case "owner-id":
				return []string{wd.account}
			case "state":
				return []string{"available"}
			case "subnet-arn":
				return []string{arn}
			case "subnet-id":
				return []string{s.ID}
			case "vpc-id":
				return []string{s.VPCID}
			}
			return tagFilter(name, s.Tags)
		})
		if !ok {
			continue
		}
		out = append(out, ec2Subnet{
			SubnetID: s.ID, SubnetArn: arn, State: "available", VpcID: s.VPCID, OwnerID: wd.account,
			CidrBlock: s.CIDRBlock, AvailableIPAddressCount: s.AvailableIPAddressCount, AvailabilityZone: s.AvailabilityZone, AvailabilityZoneID: s.AvailabilityZoneID,
			MapPublicIPOnLaunch: s.MapPublicIPOnLaunch, TagSet: tagSet(s.Tags),
		})
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID string           `xml:"requestId"`
		SubnetSet items[ec2Subnet] `xml:"subnetSet"`
		NextToken string           `xml:"nextToken,omitempty"`
	}{RequestID: r.id, SubnetSet: items[ec2Subnet]{got}, NextToken: next})
}

func (ec2API) securityGroups(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.SecurityGroups == nil {
		return denied(r, wd)
	}
	all := *wd.cf.SecurityGroups
	if err := p.notFound(r.op, func(id string) bool {
		return slices.ContainsFunc(all, func(g facts.SecurityGroup) bool { return g.ID == id })
	}); err != nil {
		return err
	}
	for _, name := range p.names {
		if !slices.ContainsFunc(all, func(g facts.SecurityGroup) bool { return g.Name == name }) {
			return badRequest("InvalidGroup.NotFound", "The security group '%s' does not exist", name)
		}
	}
	var out []ec2SecurityGroup
	for _, g := range all {
		if len(p.ids) > 0 && !slices.Contains(p.ids, g.ID) || len(p.names) > 0 && !slices.Contains(p.names, g.Name) {
			continue
		}
		ok := p.matches(func(name string) []string {
			switch name {
			case "description":
				return []string{g.Name}
			case "group-id":
				return []string{g.ID}
			case "group-name":
				return []string{g.Name}
			case "owner-id":
				return []string{wd.account}
			case "vpc-id":
				return []string{g.VPCID}
			}
			return tagFilter(name, g.Tags)
		})
		if !ok {
			continue
		}
		out = append(out, ec2SecurityGroup{
			OwnerID: wd.account, GroupID: g.ID, GroupName: g.Name, GroupDescription: g.Name, VpcID: g.VPCID,
			SecurityGroupArn: wd.arn("ec2", wd.region, wd.account, "security-group/"+g.ID), TagSet: tagSet(g.Tags),
			IPPermissions: ipPermissions(g.Ingress, wd.account), IPPermissionsEgress: ipPermissions(g.Egress, wd.account),
		})
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID         string                  `xml:"requestId"`
		SecurityGroupInfo items[ec2SecurityGroup] `xml:"securityGroupInfo"`
		NextToken         string                  `xml:"nextToken,omitempty"`
	}{RequestID: r.id, SecurityGroupInfo: items[ec2SecurityGroup]{got}, NextToken: next})
}

func (ec2API) routeTables(w http.ResponseWriter, r *request, wd *world, p *ec2Request) error {
	if wd.cf.Subnets == nil {
		return denied(r, wd) // the route tables are derived from the subnets: unknown with them
	}
	if err := p.notFound(r.op, func(id string) bool {
		return slices.ContainsFunc(wd.tables, func(t routeTable) bool { return t.id == id })
	}); err != nil {
		return err
	}
	var out []ec2RouteTable
	for _, t := range wd.tables {
		if len(p.ids) > 0 && !slices.Contains(p.ids, t.id) {
			continue
		}
		rt := ec2RouteTable{RouteTableID: t.id, VpcID: t.vpcID, OwnerID: wd.account}
		for _, rte := range t.routes {
			rt.RouteSet.Item = append(rt.RouteSet.Item, ec2RouteOf(rte))
		}
		if t.main {
			a := ec2RTAssociation{RouteTableAssociationID: fakeID("rtbassoc-", t.id, "main"), RouteTableID: t.id, Main: true}
			a.AssociationState.State = "associated"
			rt.AssociationSet.Item = append(rt.AssociationSet.Item, a)
		}
		for _, sn := range t.subnets {
			a := ec2RTAssociation{RouteTableAssociationID: fakeID("rtbassoc-", t.id, sn), RouteTableID: t.id, SubnetID: sn}
			a.AssociationState.State = "associated"
			rt.AssociationSet.Item = append(rt.AssociationSet.Item, a)
		}
		ok := p.matches(func(name string) []string {
			var vs []string
			for _, a := range rt.AssociationSet.Item {
				switch name {
				case "association.main":
					vs = append(vs, strconv.FormatBool(a.Main))
				case "association.route-table-association-id":
					vs = append(vs, a.RouteTableAssociationID)
				case "association.route-table-id":
					vs = append(vs, a.RouteTableID)
				case "association.subnet-id":
					if a.SubnetID != "" {
						vs = append(vs, a.SubnetID)
					}
				}
			}
			for _, rte := range rt.RouteSet.Item {
				switch name {
				case "route.destination-cidr-block":
					vs = append(vs, rte.DestinationCidrBlock)
				case "route.gateway-id":
					if rte.GatewayID != "" {
						vs = append(vs, rte.GatewayID)
					}
				case "route.nat-gateway-id":
					if rte.NatGatewayID != "" {
						vs = append(vs, rte.NatGatewayID)
					}
				}
			}
			switch name {
			case "owner-id":
				vs = append(vs, wd.account)
			case "route-table-id":
				vs = append(vs, t.id)
			case "vpc-id":
				vs = append(vs, t.vpcID)
			}
			return vs // the derived tables carry no tags
		})
		if ok {
			out = append(out, rt)
		}
	}
	got, next := page("ec2:"+r.op, out, p.offset, p.size)
	return writeEC2(w, r, struct {
		RequestID     string               `xml:"requestId"`
		RouteTableSet items[ec2RouteTable] `xml:"routeTableSet"`
		NextToken     string               `xml:"nextToken,omitempty"`
	}{RequestID: r.id, RouteTableSet: items[ec2RouteTable]{got}, NextToken: next})
}

// ebsEncryptionByDefault answers GetEbsEncryptionByDefault from the snapshot's ebsDefaults, denied
// when the snapshot does not know them.
func (ec2API) ebsEncryptionByDefault(w http.ResponseWriter, r *request, wd *world) error {
	d := wd.cf.EBSDefaults
	if d == nil {
		return denied(r, wd)
	}
	return writeEC2(w, r, struct {
		RequestID              string `xml:"requestId"`
		EbsEncryptionByDefault bool   `xml:"ebsEncryptionByDefault"`
	}{RequestID: r.id, EbsEncryptionByDefault: d.EncryptionByDefault})
}

// ebsDefaultKMSKeyID answers GetEbsDefaultKmsKeyId with the snapshot's ebsDefaults.kmsKeyID. AWS
// always names a key (its own alias/aws/ebs until the account sets another); a snapshot that leaves
// the key out is answered without one, so that the live provider sees exactly the snapshot's world.
func (ec2API) ebsDefaultKMSKeyID(w http.ResponseWriter, r *request, wd *world) error {
	d := wd.cf.EBSDefaults
	if d == nil {
		return denied(r, wd)
	}
	return writeEC2(w, r, struct {
		RequestID string `xml:"requestId"`
		KmsKeyID  string `xml:"kmsKeyId,omitempty"`
	}{RequestID: r.id, KmsKeyID: d.KMSKeyID})
}

// writeEC2 writes an EC2 answer: v's fields inside <ActionResponse xmlns=…>.
func writeEC2(w http.ResponseWriter, r *request, v any) error {
	return writeXML(w, http.StatusOK, ec2Envelope{name: xml.Name{Space: ec2Namespace, Local: r.op + "Response"}, v: v})
}

// ec2Envelope renames the root element of an answer to <ActionResponse xmlns=…>.
type ec2Envelope struct {
	name xml.Name
	v    any
}

func (e ec2Envelope) MarshalXML(enc *xml.Encoder, _ xml.StartElement) error {
	if err := enc.EncodeElement(e.v, xml.StartElement{Name: e.name}); err != nil {
		return fmt.Errorf("encode %s: %w", e.name.Local, err)
	}
	return nil
}

type ec2ErrorResponse struct {
	XMLName xml.Name `xml:"Response"`
	Errors  struct {
		Error struct {
			Code    string
			Message string
		}
	}
	RequestID string
}

func (ec2API) fail(w http.ResponseWriter, r *request, e *apiError) {
	var out ec2ErrorResponse
	out.Errors.Error.Code, out.Errors.Error.Message, out.RequestID = e.code, e.message, r.id
	_ = writeXML(w, e.status, out)
}

func (ec2API) resource(*request, *world) string { return "" } // EC2's calls here act on no resource
