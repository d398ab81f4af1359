package rules_test

import (
	"strings"
	"testing"
)

const mimeBootstrap = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
# /etc/eks/bootstrap.sh is mentioned in a comment only
/etc/eks/bootstrap.sh prod --kubelet-extra-args '--max-pods=110'

--BOUNDARY--
`

func TestUserdataBootstrapOnAL2023(t *testing.T) {
	testRule(t, "userdata-bootstrap-on-al2023", []ruleCase{
		{name: "no-userdata", in: nodeClass("plain", baseSpec)},
		{name: "nodeconfig", in: nodeClass("nodeconfig", withUserData(baseSpec, "", nodeConfigMIME))},
		{name: "al2-may-bootstrap", in: nodeClass("al2", withUserData(strings.Replace(baseSpec, "al2023@v20251112", "al2@v20240807", 1), "", "#!/bin/bash\n/etc/eks/bootstrap.sh prod\n"))},
		{name: "mime-bootstrap", fires: 1, in: nodeClass("mime", withUserData(baseSpec, "", mimeBootstrap))},
		{name: "script-nodeadm-init", fires: 1, in: nodeClass("nodeadm", withUserData(baseSpec, "AL2023", "#!/bin/bash\nset -e\nnodeadm init --config-source file:///etc/eks/nodeconfig.yaml\n"))},
	})
}
