package validators

// allRules lists every rule of this build. Order does not matter: the catalog sorts by kind and ID.
func allRules() []*Rule {
	return []*Rule{
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
		// exceptions
		exceptionMissingReason,
		exceptionUnknownRule,
	}
}
