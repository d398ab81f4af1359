package rules

import (
	"slices"

	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Default returns the full catalog of this build: every rule of allRules.
func Default() *validators.Catalog {
	return validators.NewCatalog(allRules()...)
}

// nodeIdentityRules are the rules about the node role's identity and permissions (join readiness).
func nodeIdentityRules() []*validators.Rule {
	return []*validators.Rule{
		nodeRoleTrustPolicy,
		nodeRoleJoinPermissions,
		nodeRoleRuntimePermissions,
		nodeUsernameMismatch,
		windowsNodeMissingKubeProxyGroup,
	}
}

// controllerPermissionRules are the rules about the Karpenter controller's permissions.
func controllerPermissionRules() []*validators.Rule {
	return []*validators.Rule{controllerLaunchPermissions, controllerRuntimePermissions}
}

// allRules lists every rule of this build. Order does not matter: the catalog sorts by kind and ID.
func allRules() []*validators.Rule {
	return slices.Concat(baseRules(), nodeIdentityRules(), controllerPermissionRules(), networkRules())
}

// networkRules are the rules of join readiness that AWS's network and capacity answers decide: the
// paths from a node to the API server and to AWS, the keys of its volumes, its capacity reservations.
func networkRules() []*validators.Rule {
	return []*validators.Rule{
		securityGroupsBlockAPIServer,
		securityGroupsBlockKubelet,
		securityGroupsExceedENILimit,
		apiServerUnreachable,
		privateEndpointDNSDisabled,
		subnetMissingVPCEndpoints,
		subnetMissingRegistryEndpoints,
		subnetFreeIPsLow,
		ebsKMSKeyUnusable,
		capacityReservationSelectorNoMatch,
		nodepoolZonesWithoutSubnets,
		nodepoolNoMatchingAMI,
		nodepoolRequirementsUnsatisfiable,
	}
}

// baseRules are the rules of the catalog before join readiness.
func baseRules() []*validators.Rule {
	return []*validators.Rule{
		// EC2NodeClass, static
		instanceProfileARN,
		amiSelectorMissingOwner,
		amiAliasVersionFormat,
		userdataBootstrapOnAL2023,
		userdataInvalid,
		customUserdataMissingUnregisteredTaint,
		selectorTermIgnoredFields,
		imdsV1Enabled,
		ebsUnencrypted,
		nodeclassV1beta1,
		karpenterCRDInvalid,
		// EC2NodeClass, with facts
		nodeRoleNotAuthorized,
		nodeRoleAccessEntryType,
		nodeRoleAccessEntryStale,
		awsAuthRoleARNHasPath,
		al2023HybridAuth,
		nodeRoleNotFound,
		instanceProfileNotFound,
		instanceProfileNoRole,
		amiSelectorNoMatch,
		amiOwnerNotAllowed,
		amiFamilyMismatch,
		amiFamilyEOL,
		subnetSelectorNoMatch,
		securityGroupSelectorNoMatch,
		selectorVPCMismatch,
		subnetPublic,
		// NodePool
		nodepoolV1beta1,
		deprecatedDisruptionAnnotation,
		staleCompatibilityAnnotation,
		nodepoolNodeclassMissing,
		nodepoolNoLimits,
		spotServiceLinkedRoleMissing,
		// aws-auth
		awsAuthMalformed,
		awsAuthRemovesNodeRole,
		awsAuthEntryIgnored,
		awsAuthGroupsMisread,
		awsAuthKeyNotRead,
		// exceptions
		exceptionMissingReason,
		exceptionUnknownRule,
	}
}
