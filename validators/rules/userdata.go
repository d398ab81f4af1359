package rules

import (
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/validators/analysis/ami"
)

// parsedUserData is an EC2NodeClass's userData parsed for its family, or why it cannot be.
type parsedUserData struct {
	ud  userdata.UserData
	err error
}

// userDataParses are the parsed userData of one evaluation, by EC2NodeClass.
var userDataParses = &validators.Analysis[*objects.Object, parsedUserData]{Name: "userData"}

// userDataParser remembers the catalog's recent parses by text, and the registration taints read
// from them: the audit re-evaluates unchanged classes every interval, and classes of a cluster share
// a few userData texts.
var userDataParser = &validators.Resource[*userdata.Parser]{Name: "parsed userData", New: func() *userdata.Parser {
	return userdata.NewParser(256)
}}

// parseUserData parses an EC2NodeClass's userData for the family whose boot agent reads it
// (bootFamily) once per evaluation; several rules read it.
func parseUserData(c *validators.Context, o *objects.Object) (userdata.UserData, error) {
	p := validators.Memo(c, userDataParses, o, func() parsedUserData {
		text := ""
		if o.NodeClass.Spec.UserData != nil {
			text = *o.NodeClass.Spec.UserData
		}
		ud, err := validators.Shared(c, userDataParser).Parse(ami.BootFamily(o.NodeClass), text)
		return parsedUserData{ud, err}
	})
	return p.ud, p.err
}
