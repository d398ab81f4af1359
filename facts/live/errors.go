package live

import (
	"github.com/karpenter-guard/karpenter-guard/facts/live/awscall"
	"github.com/karpenter-guard/karpenter-guard/facts/live/eks"
)

// CallError is an AWS call that gave no answer, worded for the operator who reads why a check was not
// evaluated (see awscall.CallError).
type CallError = awscall.CallError

// Outcome classifies how an AWS call ended, as the aws_requests_total metric labels it and as the
// reason of an unknown fact tells it (see awscall.Outcome).
type Outcome = awscall.Outcome

// Outcomes.
const (
	OutcomeSuccess     = awscall.OutcomeSuccess
	OutcomeNotFound    = awscall.OutcomeNotFound
	OutcomeDenied      = awscall.OutcomeDenied
	OutcomeThrottled   = awscall.OutcomeThrottled
	OutcomeTimeout     = awscall.OutcomeTimeout
	OutcomeCredentials = awscall.OutcomeCredentials
	OutcomeUnavailable = awscall.OutcomeUnavailable
	OutcomeError       = awscall.OutcomeError
)

// ClusterNotFoundError says the EKS cluster does not exist where the provider looks (see
// eks.ClusterNotFoundError).
type ClusterNotFoundError = eks.ClusterNotFoundError
