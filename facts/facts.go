// Package facts names what the rules may know about the cluster and the AWS account, and defines how a
// rule asks whether it knows it. Rules never call AWS or Kubernetes; they ask a Provider.
package facts

import "context"

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
	// ClusterNodeClasses is the set of EC2NodeClasses stored in the cluster (webhook and audit only).
	ClusterNodeClasses Fact = "cluster.ec2NodeClasses"
)

// Provider answers the rules' questions. Every answer distinguishes "known" from "unknown, because …".
type Provider interface {
	// Unknown returns "" when the fact is known, else a short reason it is not ("no facts",
	// "snapshot has no images section", "AWS timeout").
	Unknown(ctx context.Context, f Fact) string
}

// None is the provider with no facts at all: every rule that needs one is reported as not evaluated.
type None struct{}

// Unknown implements Provider.
func (None) Unknown(context.Context, Fact) string { return "no facts" }
