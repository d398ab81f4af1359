package rules

import (
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/userdata"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// parsedUserData is an EC2NodeClass's userData parsed for its family, or why it cannot be.
type parsedUserData struct {
	ud  userdata.UserData
	err error
}

// userDataParses are the parsed userData of one evaluation, by EC2NodeClass.
var userDataParses = &validators.Analysis[*objects.Object, parsedUserData]{Name: "userData"}

// parseUserData parses an EC2NodeClass's userData for its family once per evaluation; several rules
// read it.
func parseUserData(c *validators.Context, o *objects.Object) (userdata.UserData, error) {
	p := validators.Memo(c, userDataParses, o, func() parsedUserData {
		text := ""
		if o.NodeClass.Spec.UserData != nil {
			text = *o.NodeClass.Spec.UserData
		}
		ud, err := userdata.Parse(family(o.NodeClass), text)
		return parsedUserData{ud, err}
	})
	return p.ud, p.err
}
