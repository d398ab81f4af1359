// Package facts is what the rules may know about the cluster and the AWS account: one small Provider
// interface whose methods answer the questions the rules ask, and the types of the answers. Rules
// never call AWS or Kubernetes; they ask a Provider. Three providers give the same answers for the same
// world: live (AWS SDK and Kubernetes), snapshot (a ClusterFacts document) and none.
package facts

import (
	"context"
	"errors"
	"fmt"
)

// Fact names one section of knowledge, as written in the rule catalog and the ClusterFacts snapshot.
type Fact string

// The facts rules may need.
const (
	ClusterAuthenticationMode Fact = "cluster.authenticationMode"
	ClusterVersion            Fact = "cluster.version"
	ClusterVPCID              Fact = "cluster.vpcId"
	AccessEntries             Fact = "accessEntries"
	AWSAuth                   Fact = "awsAuth"
	Roles                     Fact = "roles"
	InstanceProfiles          Fact = "instanceProfiles"
	Images                    Fact = "images"
	SSMParameters             Fact = "ssmParameters"
	Subnets                   Fact = "subnets"
	SecurityGroups            Fact = "securityGroups"
	// EBSDefaults is the account's EBS encryption by default in the cluster's region.
	EBSDefaults Fact = "ebsDefaults"
	// ClusterPodIdentityAssociations is how many EKS Pod Identity associations the cluster has,
	// aws-node's left out: with any, the node role must let the Pod Identity agent assume roles.
	ClusterPodIdentityAssociations Fact = "cluster.podIdentityAssociations"
	// KarpenterController is the IAM role Karpenter's controller acts as (ControllerRole).
	KarpenterController Fact = "karpenterController"
	// VPCCNI is whether the Amazon VPC CNI runs and whose credentials it uses (CNI).
	VPCCNI Fact = "vpcCNI"
	// Simulations are the IAM policy simulator's answers (a lookup: a question without an answer is
	// unknown).
	Simulations Fact = "simulations"
	// ClusterNodeClasses is the set of EC2NodeClasses stored in the cluster (webhook and audit only).
	ClusterNodeClasses Fact = "cluster.ec2NodeClasses"
	// ClusterNodePools is the set of NodePools stored in the cluster (webhook and audit only): an
	// EC2NodeClass UPDATE is judged for the NodePools that use it.
	ClusterNodePools Fact = "cluster.nodePools"

	// ClusterEndpointAccess is whether the API server's endpoint is public, private or both, and the
	// CIDRs its public side admits.
	ClusterEndpointAccess Fact = "cluster.endpointAccess"
	// ClusterControlPlaneNetwork is the control plane's security groups and the subnets of its ENIs.
	ClusterControlPlaneNetwork Fact = "cluster.controlPlaneNetwork"
	// ClusterIPFamily is the cluster's IP family (ipv4 or ipv6): the network rules model IPv4 only.
	ClusterIPFamily Fact = "cluster.ipFamily"
	// VPC is the DNS attributes of the cluster's VPC.
	VPC Fact = "vpc"
	// NATGateways are the NAT gateways of the cluster's VPC.
	NATGateways Fact = "natGateways"
	// VPCEndpoints are the VPC endpoints of the cluster's VPC.
	VPCEndpoints Fact = "vpcEndpoints"
	// KMSKeys are KMS DescribeKey's answers, by key reference as a class writes it (a lookup).
	KMSKeys Fact = "kmsKeys"
	// ServiceQuotas are applied Service Quotas values, by "service/quota-code" (a lookup).
	ServiceQuotas Fact = "serviceQuotas"
	// CapacityReservations are the region's active EC2 capacity reservations.
	CapacityReservations Fact = "capacityReservations"
	// InstanceTypes are the region's instance types with the zones that offer them.
	InstanceTypes Fact = "instanceTypes"
)

// UnknownError is the answer "unknown, because …": the fact could not be had. Rules that meet it are
// reported as not evaluated with Reason, never as passed.
type UnknownError struct {
	Fact   Fact
	Reason string
	// Err is the error behind Reason, when there is one (an AWS call's).
	Err error
}

func (e *UnknownError) Error() string { return fmt.Sprintf("%s: %s", e.Reason, e.Fact) }

// Reason renders why a fact is unknown ("no facts", "not in the facts snapshot", "AWS throttled
// iam:GetRole"): an UnknownError's reason, else the error.
func Reason(err error) string {
	var u *UnknownError
	if errors.As(err, &u) {
		return u.Reason
	}
	return err.Error()
}

// Unwrap returns the error behind the reason.
func (e *UnknownError) Unwrap() error { return e.Err }

// Unknown returns an UnknownError.
func Unknown(f Fact, reason string) error { return &UnknownError{Fact: f, Reason: reason} }

// IsUnknown reports whether err says a fact is unknown.
func IsUnknown(err error) bool {
	var u *UnknownError
	return errors.As(err, &u)
}

// Provider answers the rules' questions. A method returns an *UnknownError when the fact is unknown
// (section absent, AWS unreachable, no permission); a nil pointer or empty list with a nil error is a
// known "does not exist" or "matches nothing".
type Provider interface {
	// Known returns nil when the fact can be asked at all, else an *UnknownError. The engine uses it to
	// report rules as not evaluated before running them.
	Known(ctx context.Context, f Fact) error
	// Cluster returns the cluster's identity, version, authentication mode and VPC.
	Cluster(ctx context.Context) (*Cluster, error)
	// AccessEntry returns the cluster's access entry for a role: the entry whose principal is the
	// role's ARN, with or without its IAM path, compared case-insensitively; nil when there is none
	// (and in mode CONFIG_MAP, where EKS has no access entries). One question per role, not a list of
	// every entry: a live provider then describes only the entries the rules ask about.
	AccessEntry(ctx context.Context, role *Role) (*AccessEntry, error)
	// AWSAuth returns kube-system/aws-auth, read as EKS reads it (ParseAWSAuth); nil when the ConfigMap
	// does not exist. Entries EKS drops are not in its mappings: EKS keeps the rest.
	AWSAuth(ctx context.Context) (*AWSAuthData, error)
	// Role returns the IAM role of that name, or nil when none exists.
	Role(ctx context.Context, name string) (*Role, error)
	// InstanceProfile returns the instance profile of that name, or nil when none exists.
	InstanceProfile(ctx context.Context, name string) (*InstanceProfile, error)
	// Images returns the available images an AMI selector term (not an alias) selects.
	Images(ctx context.Context, term ImageTerm) ([]Image, error)
	// SSMParameter returns the value of a parameter, with false when it does not exist.
	SSMParameter(ctx context.Context, name string) (string, bool, error)
	// Subnets returns the subnets a selector term selects.
	Subnets(ctx context.Context, term SelectorTerm) ([]Subnet, error)
	// SecurityGroups returns the security groups a selector term selects.
	SecurityGroups(ctx context.Context, term SelectorTerm) ([]SecurityGroup, error)
	// EBSDefaults returns how the account creates EBS volumes in the cluster's region when a launch
	// does not say whether to encrypt them (never nil when known).
	EBSDefaults(ctx context.Context) (*EBSEncryption, error)
	// PodIdentityAssociations returns how many EKS Pod Identity associations the cluster has, not
	// counting kube-system/aws-node's.
	PodIdentityAssociations(ctx context.Context) (int, error)
	// KarpenterController returns the role Karpenter's controller acts as (never nil when known).
	KarpenterController(ctx context.Context) (*ControllerRole, error)
	// VPCCNI returns whether the VPC CNI runs and with which credentials (never nil when known).
	VPCCNI(ctx context.Context) (*CNI, error)
	// Simulate returns the policy simulator's answer to each question of the row, in the order of
	// row.Questions(). An answer whose Decision is "" is unknown (a snapshot without that entry); an
	// error means no question of the row could be answered.
	Simulate(ctx context.Context, row SimulationRow) ([]Simulation, error)
	// VPC returns the DNS attributes of the cluster's VPC (never nil when known).
	VPC(ctx context.Context) (*VPCAttributes, error)
	// NATGateways returns the NAT gateways of the cluster's VPC.
	NATGateways(ctx context.Context) ([]NATGateway, error)
	// VPCEndpoints returns the VPC endpoints of the cluster's VPC.
	VPCEndpoints(ctx context.Context) ([]VPCEndpoint, error)
	// KMSKey returns what KMS DescribeKey says of a key reference (an id, ARN, alias name or alias
	// ARN, as written in a class); never nil when known. A key KMS does not know is Found false; one
	// whose DescribeKey was refused has Error KMSAccessDenied and nothing else.
	KMSKey(ctx context.Context, ref string) (*KMSKey, error)
	// ServiceQuota returns the applied value of a quota named "service/quota-code" (vpc/L-2AFB9258).
	ServiceQuota(ctx context.Context, code string) (int, error)
	// CapacityReservations returns the region's active capacity reservations.
	CapacityReservations(ctx context.Context) ([]CapacityReservation, error)
	// InstanceTypes returns the region's instance types, each with the zones that offer it. The list
	// is large and shared between callers: they must not modify it.
	InstanceTypes(ctx context.Context) ([]InstanceType, error)
}
