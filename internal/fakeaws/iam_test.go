package fakeaws_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

// identity is a snapshot with roles (one with a path) and instance profiles sharing a role.
const identity = header + `cluster: {name: prod-eks, accountID: "111122223333"}
roles:
  - name: KarpenterNodeRole-prod-eks
    path: /
    arn: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks
    createDate: "2025-05-30T09:00:00Z"
  - name: AWSServiceRoleForEC2Spot
    arn: arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot
  - name: Lonely
    arn: arn:aws:iam::111122223333:role/Lonely
instanceProfiles:
  - name: KarpenterNodeInstanceProfile-prod-eks
    arn: arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod-eks
    roles: [KarpenterNodeRole-prod-eks]
  - name: profile-2
    roles: [KarpenterNodeRole-prod-eks]
  - name: profile-3
    arn: arn:aws:iam::111122223333:instance-profile/nodes/profile-3
    roles: [karpenternoderole-PROD-EKS]
  - name: other
    roles: [Lonely]
  - name: empty
    roles: []
`

func TestIAMGetRole(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, identity))
	for _, tc := range []struct {
		ask, name, path, arn string
		created              time.Time
	}{
		{"KarpenterNodeRole-prod-eks", "KarpenterNodeRole-prod-eks", "/", "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks", time.Date(2025, 5, 30, 9, 0, 0, 0, time.UTC)},
		{"karpenternoderole-PROD-EKS", "KarpenterNodeRole-prod-eks", "/", "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks", time.Date(2025, 5, 30, 9, 0, 0, 0, time.UTC)},
		{"AWSServiceRoleForEC2Spot", "AWSServiceRoleForEC2Spot", "/aws-service-role/spot.amazonaws.com/", "arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot", time.Time{}},
	} {
		out, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(tc.ask)})
		if err != nil {
			t.Fatalf("%s: %v", tc.ask, err)
		}
		r := out.Role
		if aws.ToString(r.RoleName) != tc.name || aws.ToString(r.Path) != tc.path || aws.ToString(r.Arn) != tc.arn {
			t.Errorf("%s: got name %q path %q arn %q", tc.ask, aws.ToString(r.RoleName), aws.ToString(r.Path), aws.ToString(r.Arn))
		}
		if !strings.HasPrefix(aws.ToString(r.RoleId), "AROA") {
			t.Errorf("%s: role id %q", tc.ask, aws.ToString(r.RoleId))
		}
		switch {
		case tc.created.IsZero() && r.CreateDate != nil:
			t.Errorf("%s: createDate %v, want none (not in the snapshot)", tc.ask, r.CreateDate)
		case !tc.created.IsZero() && (r.CreateDate == nil || !r.CreateDate.Equal(tc.created)):
			t.Errorf("%s: createDate %v, want %v", tc.ask, r.CreateDate, tc.created)
		}
	}
}

func TestIAMGetRoleTrustPolicy(t *testing.T) {
	// A trust policy with spaces, a newline and characters that URL encodings treat differently.
	const trust = "{\"Version\": \"2012-10-17\",\n \"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"Service\": \"ec2.amazonaws.com\"}, \"Action\": \"sts:AssumeRole\", \"Sid\": \"a+b~c*d\"}]}"
	cf := snapshot(t, identity)
	(*cf.Roles)[0].AssumeRolePolicyDocument = trust
	_, c := start(t, cf)
	out, err := c.iam.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("KarpenterNodeRole-prod-eks")})
	if err != nil {
		t.Fatal(err)
	}
	// RFC 3986, as IAM sends it and the SDK leaves it: only letters, digits and -._~ stay as they are.
	const want = "%7B%22Version%22%3A%20%222012-10-17%22%2C%0A%20%22Statement%22%3A%20%5B%7B%22Effect%22%3A%20%22Allow%22%2C%20%22Principal%22%3A%20%7B%22Service%22%3A%20%22ec2.amazonaws.com%22%7D%2C%20%22Action%22%3A%20%22sts%3AAssumeRole%22%2C%20%22Sid%22%3A%20%22a%2Bb~c%2Ad%22%7D%5D%7D"
	got := aws.ToString(out.Role.AssumeRolePolicyDocument)
	if got != want {
		t.Errorf("AssumeRolePolicyDocument\n%s\nwant\n%s", got, want)
	}
	if decoded, err := url.QueryUnescape(got); err != nil || decoded != trust {
		t.Errorf("QueryUnescape gives %q, %v; want the snapshot's document", decoded, err)
	}
	// The roles of an instance profile carry it too, as IAM's do.
	prof, err := c.iam.GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("profile-2")})
	if err != nil || aws.ToString(prof.InstanceProfile.Roles[0].AssumeRolePolicyDocument) != want {
		t.Errorf("instance profile role: %+v, %v", prof, err)
	}
	// A role whose document the snapshot lacks has none.
	out, err = c.iam.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("Lonely")})
	if err != nil || out.Role.AssumeRolePolicyDocument != nil {
		t.Errorf("role without a document: %v, %v", out.Role.AssumeRolePolicyDocument, err)
	}
}

func TestIAMInstanceProfiles(t *testing.T) {
	ctx := context.Background()
	_, c := start(t, snapshot(t, identity))
	out, err := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("profile-3")})
	if err != nil {
		t.Fatal(err)
	}
	p := out.InstanceProfile
	if aws.ToString(p.InstanceProfileName) != "profile-3" || aws.ToString(p.Arn) != "arn:aws:iam::111122223333:instance-profile/nodes/profile-3" || aws.ToString(p.Path) != "/nodes/" {
		t.Errorf("profile: name %q arn %q path %q", aws.ToString(p.InstanceProfileName), aws.ToString(p.Arn), aws.ToString(p.Path))
	}
	if len(p.Roles) != 1 || aws.ToString(p.Roles[0].RoleName) != "KarpenterNodeRole-prod-eks" || aws.ToString(p.Roles[0].Arn) != "arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks" {
		t.Errorf("profile roles %+v", p.Roles)
	}
	// A profile without an ARN in the snapshot gets the one IAM would give it.
	out, err = c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("PROFILE-2")})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.InstanceProfile.Arn); got != "arn:aws:iam::111122223333:instance-profile/profile-2" {
		t.Errorf("derived ARN %q", got)
	}

	// ListInstanceProfilesForRole pages with Marker/MaxItems; role names match case-insensitively.
	for _, size := range []int32{1, 2, 3, 100} {
		var got []string
		pg := iam.NewListInstanceProfilesForRolePaginator(c.iam, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String("KarpenterNodeRole-prod-eks"), MaxItems: aws.Int32(size)})
		for pg.HasMorePages() {
			out, err := pg.NextPage(ctx)
			if err != nil {
				t.Fatalf("MaxItems %d: %v", size, err)
			}
			if len(out.InstanceProfiles) > int(size) || out.IsTruncated != (out.Marker != nil) {
				t.Errorf("MaxItems %d: page of %d, truncated %v, marker %v", size, len(out.InstanceProfiles), out.IsTruncated, out.Marker)
			}
			for _, p := range out.InstanceProfiles {
				got = append(got, aws.ToString(p.InstanceProfileName))
			}
		}
		if want := []string{"KarpenterNodeInstanceProfile-prod-eks", "profile-2", "profile-3"}; !slices.Equal(got, want) {
			t.Errorf("MaxItems %d: profiles %q, want %q", size, got, want)
		}
	}
	// A role in no profile has an empty list.
	lst, err := c.iam.ListInstanceProfilesForRole(ctx, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String("AWSServiceRoleForEC2Spot")})
	if err != nil || len(lst.InstanceProfiles) != 0 || lst.IsTruncated {
		t.Errorf("role in no profile: %+v, %v", lst, err)
	}
}

func TestIAMErrors(t *testing.T) {
	ctx := context.Background()
	known := snapshot(t, identity)
	unknown := snapshot(t, header+`cluster: {name: prod-eks, accountID: "111122223333"}`+"\n")
	getRole := func(name string) func(clients) error {
		return func(c clients) error {
			_, err := c.iam.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
			return err
		}
	}
	getProfile := func(name string) func(clients) error {
		return func(c clients) error {
			_, err := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
			return err
		}
	}
	listProfiles := func(name string) func(clients) error {
		return func(c clients) error {
			_, err := c.iam.ListInstanceProfilesForRole(ctx, &iam.ListInstanceProfilesForRoleInput{RoleName: aws.String(name)})
			return err
		}
	}
	for _, tc := range []struct {
		name   string
		known  bool
		call   func(clients) error
		code   string
		status int
		msg    string
	}{
		{"no such role", true, getRole("Missing"), "NoSuchEntity", 404, "The role with name Missing cannot be found."},
		{"no such profile", true, getProfile("Missing"), "NoSuchEntity", 404, "Instance Profile Missing cannot be found."},
		{"profiles of no such role", true, listProfiles("Missing"), "NoSuchEntity", 404, "The role with name Missing cannot be found."},
		{"role ARN as a name", true, getRole("arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks"), "ValidationError", 400, "at 'roleName' failed to satisfy constraint"},
		{"profile ARN as a name", true, getProfile("arn:aws:iam::111122223333:instance-profile/x"), "ValidationError", 400, "at 'instanceProfileName'"},
		{"roles unknown", false, getRole("KarpenterNodeRole-prod-eks"), "AccessDenied", 403,
			"User: arn:aws:sts::111122223333:assumed-role/karpenter-guard/fakeaws is not authorized to perform: iam:GetRole on resource: arn:aws:iam::111122223333:role/KarpenterNodeRole-prod-eks because no identity-based policy allows the iam:GetRole action"},
		{"profiles unknown", false, getProfile("p"), "AccessDenied", 403, "iam:GetInstanceProfile on resource: arn:aws:iam::111122223333:instance-profile/p"},
		{"profiles of a role unknown", false, listProfiles("r"), "AccessDenied", 403, "iam:ListInstanceProfilesForRole on resource: arn:aws:iam::111122223333:role/r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf := unknown
			if tc.known {
				cf = known
			}
			_, c := start(t, cf)
			err := tc.call(c)
			wantAPIError(t, err, tc.code, tc.status, tc.msg)
			if tc.code == "NoSuchEntity" {
				wantTyped[*iamtypes.NoSuchEntityException](t, err)
			}
		})
	}
}

func TestSTSGetCallerIdentity(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, snapshot string
		opts           []fakeaws.Option
		account, arn   string
		userPrefix     string
	}{
		{"from the snapshot", identity, nil, "111122223333", "arn:aws:sts::111122223333:assumed-role/karpenter-guard/fakeaws", "AROA"},
		{"partition", header + `cluster: {name: c, partition: aws-cn, accountID: "999988887777"}` + "\n", nil, "999988887777", "arn:aws-cn:sts::999988887777:assumed-role/karpenter-guard/fakeaws", "AROA"},
		{"no cluster", header + "roles: []\n", nil, fakeaws.DefaultAccountID, "arn:aws:sts::123456789012:assumed-role/karpenter-guard/fakeaws", "AROA"},
		{"caller option", identity, []fakeaws.Option{fakeaws.WithCallerARN("arn:aws:iam::222233334444:user/ci")}, "222233334444", "arn:aws:iam::222233334444:user/ci", "AIDA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, snapshot(t, tc.snapshot), tc.opts...)
			out, err := c.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToString(out.Account) != tc.account || aws.ToString(out.Arn) != tc.arn || !strings.HasPrefix(aws.ToString(out.UserId), tc.userPrefix) {
				t.Errorf("got account %q arn %q user %q", aws.ToString(out.Account), aws.ToString(out.Arn), aws.ToString(out.UserId))
			}
			if tc.userPrefix == "AROA" && !strings.HasSuffix(aws.ToString(out.UserId), ":fakeaws") {
				t.Errorf("assumed-role user id %q lacks the session name", aws.ToString(out.UserId))
			}
		})
	}
}

func TestUnsupportedQueryActions(t *testing.T) {
	_, c := start(t, snapshot(t, identity))
	_, err := c.iam.ListRoles(context.Background(), &iam.ListRolesInput{})
	wantAPIError(t, err, "InvalidAction", http.StatusBadRequest, "Could not find operation ListRoles")
	_, err = c.sts.AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::111122223333:role/x"), RoleSessionName: aws.String("s")})
	wantAPIError(t, err, "InvalidAction", http.StatusBadRequest, fmt.Sprintf("operation %s", "AssumeRole"))
}
