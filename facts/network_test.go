package facts

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestNetworkSectionsKnown: every network and capacity fact is known from the snapshot that holds
// the whole format, and the lookups answer what it records.
func TestNetworkSectionsKnown(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/every-section.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := DecodeSnapshotFile(data)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSnapshot(cf)
	for _, f := range []Fact{ClusterEndpointAccess, ClusterControlPlaneNetwork, ClusterIPFamily, VPC, NATGateways, VPCEndpoints, KMSKeys, ServiceQuotas, CapacityReservations, InstanceTypes} {
		if err := s.Known(ctx, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if k, err := s.KMSKey(ctx, "alias/karpenter-ebs"); err != nil || k.KeyState != KeyStateEnabled {
		t.Errorf("KMSKey(alias/karpenter-ebs) = %+v, %v", k, err)
	}
	if k, err := s.KMSKey(ctx, "alias/other-account-key"); err != nil || k.Error != KMSAccessDenied {
		t.Errorf("a refused DescribeKey is an answer with its error: %+v, %v", k, err)
	}
	_, err = s.KMSKey(ctx, "alias/never-asked")
	wantUnknown(t, "KMSKey of a reference without an entry", err, KMSKeys, "the facts snapshot has no kmsKeys entry for alias/never-asked")
	if q, err := s.ServiceQuota(ctx, QuotaSecurityGroupsPerENI); err != nil || q != 5 {
		t.Errorf("ServiceQuota = %d, %v", q, err)
	}
	_, err = s.ServiceQuota(ctx, "ec2/L-1216C47A")
	wantUnknown(t, "ServiceQuota without an entry", err, ServiceQuotas, "the facts snapshot has no serviceQuotas entry for ec2/L-1216C47A")

	// What a Recorder writes down reads back the same.
	r := NewRecorder(s)
	_, _ = r.Cluster(ctx)
	_ = r.Known(ctx, VPC)
	_, _ = r.NATGateways(ctx)
	_, _ = r.VPCEndpoints(ctx)
	_, _ = r.KMSKey(ctx, "alias/karpenter-ebs")
	_, _ = r.KMSKey(ctx, "alias/other-account-key")
	_, _ = r.ServiceQuota(ctx, QuotaSecurityGroupsPerENI)
	_, _ = r.CapacityReservations(ctx)
	_, _ = r.InstanceTypes(ctx)
	rec := r.Snapshot()
	for name, pair := range map[string][2]any{
		"vpc":                  {rec.VPC, cf.VPC},
		"natGateways":          {rec.NATGateways, cf.NATGateways},
		"vpcEndpoints":         {rec.VPCEndpoints, cf.VPCEndpoints},
		"kmsKeys":              {rec.KMSKeys, cf.KMSKeys},
		"serviceQuotas":        {rec.ServiceQuotas, cf.ServiceQuotas},
		"capacityReservations": {rec.CapacityReservations, cf.CapacityReservations},
		"instanceTypes":        {rec.InstanceTypes, cf.InstanceTypes},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("recorded %s = %+v, want %+v", name, pair[0], pair[1])
		}
	}
	if rec.Cluster == nil || !reflect.DeepEqual(rec.Cluster.ClusterNetwork, cf.Cluster.ClusterNetwork) {
		t.Errorf("recorded cluster network = %+v", rec.Cluster)
	}
}

// TestNetworkSectionErrors: each network and capacity section says what is wrong with it, on its line.
func TestNetworkSectionErrors(t *testing.T) {
	cases := []struct {
		name, in string
		line     int
		want     string
	}{
		{"cidr", "subnets:\n- id: subnet-a\n  vpcID: vpc-1\n  availabilityZone: us-east-1a\n  mapPublicIpOnLaunch: false\n  public: false\n  cidrBlock: 10.0.0.0/33\n", 9,
			`subnets[0].cidrBlock "10.0.0.0/33" is not a CIDR block`},
		{"routes without a table", "subnets:\n- id: subnet-a\n  vpcID: vpc-1\n  availabilityZone: us-east-1a\n  mapPublicIpOnLaunch: false\n  public: false\n  routes: [{destination: 0.0.0.0/0, target: nat-1}]\n", 9,
			"subnets[0] has routes but no routeTableID"},
		{"route state", "subnets:\n- id: subnet-a\n  vpcID: vpc-1\n  availabilityZone: us-east-1a\n  mapPublicIpOnLaunch: false\n  public: false\n  routeTableID: rtb-1\n  routes: [{destination: 0.0.0.0/0, target: nat-1, state: up}]\n", 10,
			`subnets[0].routes[0].state "up": expected active or blackhole`},
		{"ip family", "cluster:\n  ipFamily: IPv4\n", 4, `cluster.ipFamily "IPv4": expected ipv4 or ipv6`},
		{"public access cidr", "cluster:\n  publicAccessCidrs: [203.0.113.7]\n", 4, `cluster.publicAccessCidrs[0] "203.0.113.7" is not a CIDR block`},
		{"nat ip", "natGateways:\n- {id: nat-1, publicIps: [203.0.113]}\n", 4, `natGateways[0].publicIps[0] "203.0.113" is not an IP address`},
		{"nat duplicate", "natGateways:\n- {id: nat-1}\n- {id: nat-1}\n", 5, `natGateways[1].id "nat-1" duplicates natGateways[0]`},
		{"endpoint type", "vpcEndpoints:\n- {id: vpce-1, serviceName: com.amazonaws.us-east-1.ec2, type: interface}\n", 4, `vpcEndpoints[0].type "interface": expected Interface, Gateway`},
		{"kms error", "kmsKeys:\n- {ref: alias/k, error: Throttled}\n", 4, `kmsKeys[0].error "Throttled": expected AccessDenied`},
		{"kms error and answer", "kmsKeys:\n- {ref: alias/k, error: AccessDenied, found: true}\n", 4, "kmsKeys[0] has an error and an answer"},
		{"kms neither", "kmsKeys:\n- {ref: alias/k, keyState: Enabled}\n", 4, "kmsKeys[0] needs found: true"},
		{"kms duplicate", "kmsKeys:\n- {ref: alias/k, found: false}\n- {ref: alias/k, found: false}\n", 5, `kmsKeys[1].ref "alias/k" duplicates kmsKeys[0]`},
		{"quota key", "serviceQuotas:\n  L-2AFB9258: 5\n", 4, `serviceQuotas key "L-2AFB9258": expected service/quota-code`},
		{"quota quoted", "serviceQuotas:\n  vpc/L-2AFB9258: \"5\"\n", 4, `expected a whole number`},
		{"instance type name", "instanceTypes:\n- {instanceType: m7g}\n", 4, `instanceTypes[0].instanceType "m7g": expected family.size`},
		{"instance type duplicate", "instanceTypes:\n- {instanceType: m7g.large}\n- {instanceType: m7g.large}\n", 5, `instanceTypes[1].instanceType "m7g.large" duplicates instanceTypes[0]`},
		{"reservation without id", "capacityReservations:\n- {instanceType: p5.48xlarge}\n", 4, "capacityReservations[0] has no id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSnapshotFile([]byte(lines(hdrAPI, hdrKind) + tc.in))
			se, ok := err.(*SnapshotError)
			if !ok {
				t.Fatalf("error %v, want a *SnapshotError", err)
			}
			if se.Line != tc.line || !strings.Contains(se.Message, tc.want) {
				t.Errorf("line %d: %s\nwant line %d: …%s…", se.Line, se.Message, tc.line, tc.want)
			}
		})
	}
}
