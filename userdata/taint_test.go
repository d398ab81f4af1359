package userdata

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// registers parses text for a family and reads the unregistered taint from it.
func registers(t *testing.T, family, text string) Registration {
	t.Helper()
	ud, err := Parse(family, text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", family, err)
	}
	return ud.Registers(UnregisteredTaintKey, UnregisteredTaintEffect)
}

func TestRegisters(t *testing.T) {
	const (
		flag = "--register-with-taints=karpenter.sh/unregistered:NoExecute"
		br   = "[settings.kubernetes]\ncluster-name = \"prod\"\n\n"
	)
	registered := func(where string) Registration { return Registration{Verdict: Registered, Where: where} }
	cannotTell := func(where string) Registration { return Registration{Verdict: CannotTell, Where: where} }
	notRegistered := Registration{}
	tests := []struct {
		name   string
		family string
		text   string
		want   Registration
	}{
		// Shell scripts, plain or in MIME parts.
		{
			name:   "bootstrap.sh with the flag in single-quoted kubelet-extra-args",
			family: FamilyCustom,
			text:   "#!/bin/bash\nset -e\n/etc/eks/bootstrap.sh prod --kubelet-extra-args '--node-labels=a=b " + flag + "'\n",
			want:   registered("line 3 of userData"),
		},
		{
			name:   "Karpenter's own form: a %q-quoted list inside kubelet-extra-args, over continued lines",
			family: FamilyCustom,
			text:   "#!/bin/bash -xe\n/etc/eks/bootstrap.sh 'prod' --apiserver-endpoint 'https://x' \\\n--kubelet-extra-args '--node-labels=\"a=b\" --register-with-taints=\"karpenter.sh/unregistered:NoExecute\"'\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "flag and list as two arguments, with a value and other taints",
			family: FamilyCustom,
			text:   "#!/bin/sh\nexec /usr/bin/kubelet --config /etc/kubelet.yaml --register-with-taints dedicated=gpu:NoSchedule,karpenter.sh/unregistered=true:NoExecute\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "underscores in the flag name, as pflag normalises them",
			family: FamilyCustom,
			text:   "#!/bin/bash\nkubelet --register_with_taints=karpenter.sh/unregistered:NoExecute\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "an exported variable holding the kubelet arguments",
			family: FamilyCustom,
			text:   "#!/bin/bash\nexport KUBELET_EXTRA_ARGS=\"--max-pods=110 " + flag + "\"\n/opt/join.sh\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "a plain assignment with escapes inside double quotes",
			family: FamilyCustom,
			text:   "#!/bin/bash\nKUBELET_EXTRA_ARGS=\"--node-labels=\\\"x=y\\\" " + flag + "\"\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "an array of arguments",
			family: FamilyCustom,
			text:   "#!/bin/bash\nARGS=(--max-pods=110 '" + flag + "')\nkubelet \"${ARGS[@]}\"\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "a nodeadm NodeConfig written by a here-document",
			family: FamilyCustom,
			text: "#!/bin/bash\ncat <<'EOF' > /etc/eks/nodeadm.d/taints.yaml\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n" +
				"      registerWithTaints:\n        - key: karpenter.sh/unregistered\n          effect: NoExecute\nEOF\nnodeadm init --config-source file:///etc/eks/nodeadm.d/taints.yaml\n",
			want: registered("spec.kubelet.config.registerWithTaints in userData"),
		},
		{
			name:   "a kubelet configuration in JSON written by a here-document",
			family: FamilyCustom,
			text:   "#!/bin/bash\ncat > /etc/kubernetes/kubelet/config.json <<EOF\n{\"kind\": \"KubeletConfiguration\",\n \"registerWithTaints\": [{\"key\": \"karpenter.sh/unregistered\", \"effect\": \"NoExecute\"}]}\nEOF\n",
			want:   registered("line 4 of userData"),
		},
		{
			name:   "a systemd drop-in written by a here-document",
			family: FamilyCustom,
			text:   "#!/bin/bash\ncat <<-EOF > /etc/systemd/system/kubelet.service.d/30-taints.conf\n\t[Service]\n\t# the taint Karpenter removes\n\tEnvironment=\"KUBELET_EXTRA_ARGS=" + flag + "\"\n\tEOF\n",
			want:   registered("line 5 of userData"),
		},
		{
			name:   "a NodeConfig here-document that expands variables (nodeadm for hybrid nodes)",
			family: FamilyCustom,
			text: "#!/bin/bash\nmkdir -p /etc/eks\ncat > /etc/eks/nodeadm-config.yaml <<EOF\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: ${EKS_CLUSTER_NAME}\n" +
				"  kubelet:\n    flags:\n      - --provider-id=aws:///${INSTANCE_ID}\n      - " + flag + "\nEOF\nnodeadm init --config-source file:///etc/eks/nodeadm-config.yaml\n",
			want: registered("spec.kubelet.flags in userData"),
		},
		{
			name:   "a systemd drop-in here-document that expands variables (kubeadm join)",
			family: FamilyCustom,
			text: "#!/bin/bash\nset -euxo pipefail\nPROVIDER_ID=\"aws:///${AWS_AZ}/${INSTANCE_ID}\"\ncat >/etc/systemd/system/kubelet.service.d/20-karpenter.conf <<EOF\n[Service]\n" +
				"Environment=\"KUBELET_EXTRA_ARGS=--cloud-provider=external --provider-id=${PROVIDER_ID} " + flag + " --node-labels=node.lifecycle=karpenter\"\nEOF\nsystemctl daemon-reload\n",
			want: registered("line 6 of userData"),
		},
		{
			name:   "RKE2's kubelet-arg, which names the flag without its dashes, cannot be told",
			family: FamilyCustom,
			text:   "#!/bin/bash\ncurl -sfL https://get.rke2.io | sh -\nrke2 agent --kubelet-arg=\"register-with-taints=karpenter.sh/unregistered=true:NoExecute\"\n",
			want:   cannotTell("line 3 of userData"),
		},
		{
			name:   "a Talos machine configuration cannot be told",
			family: FamilyCustom,
			text:   "version: v1alpha1\nmachine:\n  type: worker\n  kubelet:\n    extraArgs:\n      register-with-taints: karpenter.sh/unregistered:NoExecute\n",
			want:   cannotTell("line 6 of userData"),
		},
		{
			name:   "a shell part of a MIME document, after other parts",
			family: FamilyCustom,
			text:   mimeDoc("Content-Type: text/cloud-config\n\nruncmd: [echo hi]\n", "Content-Type: text/x-shellscript\n\n#!/bin/bash\n\n/opt/join.sh "+flag+"\n"),
			want:   registered("line 3 of MIME part 2"),
		},
		{
			name:   "a base64 shell part, as cloud-init decodes it",
			family: FamilyCustom,
			text:   mimeDoc("Content-Type: text/x-shellscript\nContent-Transfer-Encoding: base64\n\n" + b64("#!/bin/bash\n/opt/join.sh "+flag+"\n") + "\n"),
			want:   registered("line 2 of MIME part 1"),
		},
		{
			name:   "a MIME part cut off by the end of the document, which cloud-init still runs",
			family: FamilyCustom,
			text:   "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/x-shellscript\n\n#!/bin/bash\n/opt/join.sh " + flag + "\n",
			want:   registered("line 2 of MIME part 1"),
		},
		{
			name:   "a single-part MIME document, which cloud-init reads",
			family: FamilyCustom,
			text:   "MIME-Version: 1.0\nContent-Type: text/x-shellscript\n\n#!/bin/bash\n/opt/join.sh " + flag + "\n",
			want:   registered("line 2 of MIME part 1"),
		},
		{
			name:   "a command substitution runs its commands",
			family: FamilyCustom,
			text:   "#!/bin/bash\nPID=$(kubelet " + flag + " & echo $!)\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "a taint only in a comment line",
			family: FamilyCustom,
			text:   "#!/bin/bash\n# " + flag + "\n/opt/join.sh\n",
			want:   notRegistered,
		},
		{
			name:   "a commented-out bootstrap line",
			family: FamilyCustom,
			text:   "#!/bin/bash\n#/etc/eks/bootstrap.sh prod --kubelet-extra-args '" + flag + "'\n/etc/eks/bootstrap.sh prod\n",
			want:   notRegistered,
		},
		{
			name:   "a comment after a word that opens a quote in the comment",
			family: FamilyCustom,
			text:   "#!/bin/bash\n/opt/join.sh --node-labels=team=ops # Karpenter's taint, later: " + flag + "\n",
			want:   notRegistered,
		},
		{
			name:   "a taint only inside a here-document fed to the no-op command",
			family: FamilyCustom,
			text:   "#!/bin/bash\n: <<'DISABLED'\n/etc/eks/bootstrap.sh prod --kubelet-extra-args '" + flag + "'\nDISABLED\n/etc/eks/bootstrap.sh prod\n",
			want:   notRegistered,
		},
		{
			name:   "a taint only in a comment of a NodeConfig here-document",
			family: FamilyCustom,
			text: "#!/bin/bash\ncat <<EOF > /etc/eks/nodeadm.d/k.yaml\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n" +
				"      - --node-labels=a=b\n      # - " + flag + "\nEOF\n",
			want: notRegistered,
		},
		{
			name:   "a taint registered with another effect, while NoExecute is used for another taint",
			family: FamilyCustom,
			text:   "#!/bin/bash\nkubelet --register-with-taints=karpenter.sh/unregistered:NoSchedule,dedicated=gpu:NoExecute\n",
			want:   Registration{Where: "line 2 of userData", OtherEffects: []string{"NoSchedule"}},
		},
		{
			name:   "a taint without an effect",
			family: FamilyCustom,
			text:   "#!/bin/bash\nkubelet --register-with-taints=karpenter.sh/unregistered\n",
			want:   Registration{Where: "line 2 of userData", OtherEffects: []string{""}},
		},
		{
			name:   "a taint list from a variable cannot be told",
			family: FamilyCustom,
			text:   "#!/bin/bash\nTAINTS=$(curl -s http://169.254.169.254/taints)\nkubelet --register-with-taints=$TAINTS\n",
			want:   cannotTell("line 3 of userData"),
		},
		{
			name:   "a taint with an effect from a variable cannot be told",
			family: FamilyCustom,
			text:   "#!/bin/bash\nkubelet --register-with-taints=\"karpenter.sh/unregistered:${EFFECT}\"\n",
			want:   cannotTell("line 2 of userData"),
		},
		{
			name:   "a taint in a variable used later cannot be told",
			family: FamilyCustom,
			text:   "#!/bin/bash\nT=karpenter.sh/unregistered:NoExecute\n/opt/join.sh --taints \"$T\"\n",
			want:   cannotTell("line 2 of userData"),
		},
		{
			name:   "a taint in a script for another interpreter cannot be told",
			family: FamilyCustom,
			text:   "#!/usr/bin/env python3\n# " + flag + "\nimport subprocess\n",
			want:   cannotTell("line 2 of userData"),
		},
		{
			name:   "a taint in a script bash cannot parse cannot be told",
			family: FamilyCustom,
			text:   "#!/bin/bash\nif true; then\n  kubelet " + flag + "\n",
			want:   cannotTell("line 3 of userData"),
		},
		{
			name:   "a script run through env",
			family: FamilyCustom,
			text:   "#!/usr/bin/env -S bash -e\nkubelet " + flag + "\n",
			want:   registered("line 2 of userData"),
		},
		{
			name:   "a script written by a here-document, that writes a NodeConfig by another",
			family: FamilyCustom,
			text: "#!/bin/bash\ncat <<'OUTER' > /opt/join.sh\n#!/bin/bash\n# " + flag + "\ncat <<INNER > /etc/eks/nodeadm.d/t.yaml\n" +
				"kind: NodeConfig\nspec: {kubelet: {flags: [\"" + flag + "\"]}}\nINNER\nOUTER\nbash /opt/join.sh\n",
			want: registered("spec.kubelet.flags in userData"),
		},
		{
			name:   "here-documents nested deeper than they are read cannot be told",
			family: FamilyCustom,
			text:   nestHeredocs(maxNesting+1, "kubelet "+flag+"\n"),
			want:   cannotTell(fmt.Sprintf("line %d of userData", 2*(maxNesting+1)+1)),
		},
		{
			name:   "here-documents nested as deep as they are read",
			family: FamilyCustom,
			text:   nestHeredocs(maxNesting, "kubelet "+flag+"\n"),
			want:   registered(fmt.Sprintf("line %d of userData", 2*maxNesting+1)),
		},
		{
			name:   "a script that never names the taint",
			family: FamilyCustom,
			text:   "#!/bin/bash\n/opt/gpu-node/join-cluster.sh --cluster prod\n",
			want:   notRegistered,
		},
		{
			name:   "a flag with a list of other taints only",
			family: FamilyCustom,
			text:   "#!/bin/bash\nkubelet --register-with-taints=dedicated=gpu:NoSchedule\n",
			want:   notRegistered,
		},
		// NodeConfig (nodeadm).
		{
			name:   "NodeConfig flags",
			family: FamilyCustom,
			text:   "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags:\n      - --node-labels=a=b\n      - " + flag + "\n",
			want:   registered("spec.kubelet.flags in userData"),
		},
		{
			name:   "NodeConfig registerWithTaints in a MIME part",
			family: FamilyCustom,
			text: mimeDoc("Content-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n" +
				"      registerWithTaints:\n      - {key: karpenter.sh/unregistered, value: \"true\", effect: NoExecute}\n"),
			want: registered("spec.kubelet.config.registerWithTaints in MIME part 1"),
		},
		{
			name:   "NodeConfig field names match without regard to case, as nodeadm decodes them",
			family: FamilyCustom,
			text:   "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  Kubelet:\n    Flags: [\"" + flag + "\"]\n",
			want:   registered("spec.kubelet.flags in userData"),
		},
		{
			name:   "gzip+base64 NodeConfig part, as nodeadm decompresses it",
			family: FamilyCustom,
			text:   mimeDoc("Content-Type: application/node.eks.aws\n\n" + gzipB64(t, "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: [\""+flag+"\"]\n") + "\n"),
			want:   registered("spec.kubelet.flags in MIME part 1"),
		},
		{
			name:   "NodeConfig registerWithTaints commented out",
			family: FamilyCustom,
			text: "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      maxPods: 110\n" +
				"      # registerWithTaints:\n      #   - {key: karpenter.sh/unregistered, effect: NoExecute}\n",
			want: notRegistered,
		},
		{
			name:   "NodeConfig registering the key with another effect",
			family: FamilyCustom,
			text:   "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n      - {key: karpenter.sh/unregistered, effect: NoSchedule}\n      - {key: other, effect: NoExecute}\n",
			want:   Registration{Where: "spec.kubelet.config.registerWithTaints in userData", OtherEffects: []string{"NoSchedule"}},
		},
		{
			name:   "NodeConfig naming the key where nodeadm reads no taints",
			family: FamilyCustom,
			text:   "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: [\"--node-labels=karpenter.sh/unregistered=NoExecute\"]\n    config:\n      karpenter.sh/unregistered: NoExecute\n",
			want:   notRegistered,
		},
		// cloud-config.
		{
			name:   "cloud-config runcmd",
			family: FamilyCustom,
			text:   "#cloud-config\nruncmd:\n  - /etc/eks/bootstrap.sh prod --kubelet-extra-args '" + flag + "'\n",
			want:   registered("line 3 of userData"),
		},
		{
			name:   "cloud-config runcmd as an argv list",
			family: FamilyCustom,
			text:   "#cloud-config\nruncmd:\n  - [/usr/bin/kubelet, --register-with-taints, \"karpenter.sh/unregistered:NoExecute\"]\n",
			want:   registered("line 3 of userData"),
		},
		{
			name:   "cloud-config writing a kubelet configuration",
			family: FamilyCustom,
			text:   "#cloud-config\nwrite_files:\n  - path: /etc/kubernetes/kubelet/config.yaml\n    content: |\n      kind: KubeletConfiguration\n      registerWithTaints: [{key: karpenter.sh/unregistered, effect: NoExecute}]\n",
			want:   registered("line 6 of userData"),
		},
		{
			name:   "cloud-config runcmd script with the command commented out",
			family: FamilyCustom,
			text:   "#cloud-config\nruncmd:\n  - |\n    set -e\n    # kubelet " + flag + "\n    /opt/join.sh\n",
			want:   notRegistered,
		},
		{
			name:   "cloud-config with the command commented out",
			family: FamilyCustom,
			text:   "#cloud-config\nruncmd:\n  - /etc/eks/bootstrap.sh prod\n  # - /etc/eks/bootstrap.sh prod --kubelet-extra-args '" + flag + "'\n",
			want:   notRegistered,
		},
		// Bottlerocket settings.
		{
			name:   "Bottlerocket node-taints as Karpenter writes them",
			family: FamilyBottlerocket,
			text:   br + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n",
			want:   registered("settings.kubernetes.node-taints in userData"),
		},
		{
			name:   "Bottlerocket node-taints as one string with a value",
			family: FamilyBottlerocket,
			text:   br + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = \"true:NoExecute\"\n",
			want:   registered("settings.kubernetes.node-taints in userData"),
		},
		{
			name:   "Bottlerocket node-taints as a dotted key",
			family: FamilyBottlerocket,
			text:   "[settings.kubernetes]\nnode-taints.\"karpenter.sh/unregistered\" = [\"NoSchedule\", \":NoExecute\"]\n",
			want:   registered("settings.kubernetes.node-taints in userData"),
		},
		{
			name:   "Bottlerocket settings read by amiFamily Custom over an image ID",
			family: FamilyCustom,
			text:   br + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\":NoExecute\"]\n",
			want:   registered("settings.kubernetes.node-taints in userData"),
		},
		{
			name:   "Bottlerocket node-taints commented out",
			family: FamilyBottlerocket,
			text:   br + "# [settings.kubernetes.node-taints]\n# \"karpenter.sh/unregistered\" = [\":NoExecute\"]\n",
			want:   notRegistered,
		},
		{
			name:   "Bottlerocket taint written as a label",
			family: FamilyBottlerocket,
			text:   br + "[settings.kubernetes.node-labels]\n\"karpenter.sh/unregistered\" = \"NoExecute\"\n",
			want:   notRegistered,
		},
		{
			name:   "Bottlerocket taint with another effect",
			family: FamilyBottlerocket,
			text:   br + "[settings.kubernetes.node-taints]\n\"karpenter.sh/unregistered\" = [\"true:NoSchedule\"]\n",
			want:   Registration{Where: "settings.kubernetes.node-taints in userData", OtherEffects: []string{"NoSchedule"}},
		},
		{
			name:   "Bottlerocket key named in a bootstrap command cannot be told",
			family: FamilyBottlerocket,
			text:   br + "[settings.bootstrap-commands.taint]\ncommands = [[\"apiclient\", \"set\", \"kubernetes.node-taints.karpenter.sh/unregistered=:NoExecute\"]]\n",
			want:   cannotTell("settings.bootstrap-commands.taint.commands in userData"),
		},
		// What nothing here reads.
		{
			name:   "Windows userData naming the key cannot be told",
			family: FamilyWindows2022,
			text:   "<powershell>\n& C:\\join.ps1 -KubeletExtraArgs '" + flag + "'\n</powershell>\n",
			want:   cannotTell("line 2 of userData"),
		},
		{
			name:   "empty userData",
			family: FamilyCustom,
			text:   "",
			want:   notRegistered,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := registers(t, tc.family, tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Registers() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// nestHeredocs wraps script in n scripts, each writing the next with a here-document: script's first
// line becomes line 2n+1.
func nestHeredocs(n int, script string) string {
	for i := range n {
		d := fmt.Sprintf("D%d", i)
		script = "#!/bin/bash\ncat <<'" + d + "' > /opt/s" + d + ".sh\n" + script + d + "\n"
	}
	return script
}

// TestRegistersKarpenterExamples: none of Karpenter's own example userData (examples/v1 of
// karpenter-provider-aws) is read as registering something it does not, or as broken. Only the
// Custom ones need the taint; they do not register it, as their own comments say they leave
// bootstrapping to the user.
func TestRegistersKarpenterExamples(t *testing.T) {
	customFamily := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n" +
		"#!/bin/bash\necho \"Running my custom set-up\"\n\n# Have the kubelet label the node\n/etc/eks/bootstrap.sh my-cluster --kubelet-extra-args='--node-labels=foo=bar'\n\n--BOUNDARY\n"
	tests := []struct {
		name, family, text string
	}{
		{"custom-family.yaml", FamilyCustom, customFamily},
		{"br-custom-userdata.yaml", FamilyBottlerocket, "[settings.kubernetes]\nkube-api-qps = 30\n"},
		{"al2023-custom-userdata.yaml", FamilyAL2023, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n" +
			"# Example custom nodeconfig which mounts individual drives on an instance\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  instance:\n    localStorage:\n      strategy: Mount\n\n" +
			"--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho \"Hello, AL2023!\"\n--//\n"},
		{"al2-custom-userdata.yaml", FamilyAL2, "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n--BOUNDARY\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash\necho \"Running a custom user data script\"\n\n--BOUNDARY--\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := registers(t, tc.family, tc.text); !reflect.DeepEqual(got, Registration{}) {
				t.Errorf("Registers() = %+v, want not registered, and nothing named", got)
			}
		})
	}
	// custom-family-with-alias.yaml is custom-family.yaml over bottlerocket@latest: Bottlerocket reads
	// no script.
	if _, err := Parse(FamilyBottlerocket, customFamily); err == nil || !strings.Contains(err.Error(), "this is a shell script") {
		t.Errorf("Parse(Bottlerocket, custom-family-with-alias.yaml userData) error = %v, want a shell script refused", err)
	}
}

// TestRegistersStopsAtFirstRegistration: the first registration decides, and a later one with another
// effect or that cannot be told does not undo it.
func TestRegistersOrder(t *testing.T) {
	text := "#!/bin/bash\nkubelet --register-with-taints=karpenter.sh/unregistered:NoExecute\nkubelet --register-with-taints=$T\nkubelet --register-with-taints=karpenter.sh/unregistered:NoSchedule\n"
	if got, want := registers(t, FamilyCustom, text), (Registration{Verdict: Registered, Where: "line 2 of userData"}); !reflect.DeepEqual(got, want) {
		t.Errorf("Registers() = %+v, want %+v", got, want)
	}
	text = "#!/bin/bash\nkubelet --register-with-taints=karpenter.sh/unregistered:NoSchedule\nkubelet --register-with-taints=$T\n"
	if got, want := registers(t, FamilyCustom, text), (Registration{Verdict: CannotTell, Where: "line 3 of userData", OtherEffects: []string{"NoSchedule"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Registers() = %+v, want %+v", got, want)
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[Verdict]string{NotRegistered: "not registered", Registered: "registered", CannotTell: "cannot tell", Verdict(7): "Verdict(7)"} {
		if got := v.String(); got != want {
			t.Errorf("Verdict(%d).String() = %q, want %q", int(v), got, want)
		}
	}
}
