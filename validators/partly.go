package validators

// PartlyEvaluated is the error of a Check that judged part of an object and could not judge the rest
// for want of a fact: the engine reports the findings returned with it, and the rule as not evaluated
// for the object with Err's reason. A rule whose verdict on one field needs no fact while another's
// does (ebs-unencrypted: an explicit `encrypted: false` without the account's EBS defaults, an
// omitted `encrypted` only with them) thus neither drops what it found nor passes what it could not
// judge. Any other error drops the findings (see Rule.Check).
type PartlyEvaluated struct {
	// Err is why the rest was not judged: the provider's *facts.UnknownError, as returned.
	Err error
}

func (e *PartlyEvaluated) Error() string { return e.Err.Error() }

// Unwrap returns the error behind it, for facts.Reason and facts.IsUnknown.
func (e *PartlyEvaluated) Unwrap() error { return e.Err }
