package fakeaws

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/karpenter-guard/karpenter-guard/facts"
)

// EKS Pod Identity associations, REST-JSON like the rest of EKS:
//
//	GET /clusters/{name}/pod-identity-associations?namespace&serviceAccount&maxResults&nextToken
//	                                                         ListPodIdentityAssociations
//	GET /clusters/{name}/pod-identity-associations/{id}    DescribePodIdentityAssociation
//
// The snapshot holds no associations, only what they imply: the controller's (karpenterController with
// source podIdentity), aws-node's (vpcCNI with credentials podIdentity), and how many the cluster has
// but aws-node's (cluster.podIdentityAssociations). The fake makes up associations that give each of
// them back: the controller's and aws-node's as the snapshot says, and the rest for made-up service
// accounts in namespace podIdentityFillerNamespace.

// podIdentityAssociation is one association the fake derives from the snapshot.
type podIdentityAssociation struct {
	namespace, serviceAccount string
	roleARN, targetRoleARN    string
	policy                    string // the session policy ("": none)
	id, arn                   string
}

// podIdentityFillerNamespace holds the service accounts of the associations the fake makes up so that
// the cluster has as many as cluster.podIdentityAssociations says.
const podIdentityFillerNamespace = "workloads"

// podIdentitySessionPolicy is the session policy of the controller's association when the snapshot says
// it has one (karpenterController.sessionPolicy); the snapshot does not hold the policy itself.
const podIdentitySessionPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`

// defaultControllerServiceAccount is Karpenter's ServiceAccount when the snapshot names none (the
// GuardConfig's default).
const defaultControllerServiceAccount = "kube-system/karpenter"

// derivePodIdentity builds the cluster's associations; they stay unknown (nil) when the snapshot says
// nothing about them.
func (wd *world) derivePodIdentity() {
	cf := wd.cf
	kc := cf.KarpenterController
	controller := kc != nil && kc.Source == facts.CredentialsPodIdentity
	cni := cf.VPCCNI != nil && cf.VPCCNI.Credentials == facts.CredentialsPodIdentity
	var count *int
	if cf.Cluster != nil {
		count = cf.Cluster.PodIdentityAssociations
	}
	if !controller && !cni && count == nil {
		return
	}
	cluster := ""
	if cf.Cluster != nil {
		cluster = cf.Cluster.Name
	}
	add := func(a podIdentityAssociation) {
		a.id = associationID(cluster, a.namespace, a.serviceAccount)
		a.arn = wd.arn("eks", wd.region, wd.account, "podidentityassociation/"+cluster+"/"+a.id)
		wd.associations = append(wd.associations, a)
	}
	wd.associations = []podIdentityAssociation{}
	if controller {
		sa := kc.ServiceAccount
		if sa == "" {
			sa = defaultControllerServiceAccount
		}
		ns, name, _ := strings.Cut(sa, "/")
		a := podIdentityAssociation{namespace: ns, serviceAccount: name, roleARN: kc.RoleARN, targetRoleARN: kc.TargetRoleARN}
		if kc.SessionPolicy != nil && *kc.SessionPolicy {
			a.policy = podIdentitySessionPolicy
		}
		add(a)
	}
	if cni {
		add(podIdentityAssociation{namespace: "kube-system", serviceAccount: "aws-node", roleARN: cf.VPCCNI.RoleARN})
	}
	if count != nil {
		n := *count
		if controller {
			n-- // the controller's association is one of them
		}
		for i := 1; i <= n; i++ {
			name := "workload-" + strconv.Itoa(i)
			add(podIdentityAssociation{namespace: podIdentityFillerNamespace, serviceAccount: name,
				roleARN: wd.arn("iam", "", wd.account, "role/"+name)})
		}
	}
}

// associationID is the stable id of a service account's association: "a-" and 17 characters, as EKS's.
func associationID(cluster, namespace, serviceAccount string) string {
	return "a-" + fakeID("", cluster, namespace, serviceAccount)
}

// eksAssociationSummary and eksAssociation are the JSON shapes of EKS's answers.
type eksAssociationSummary struct {
	ClusterName    string `json:"clusterName"`
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	AssociationArn string `json:"associationArn"`
	AssociationID  string `json:"associationId"`
	OwnerArn       string `json:"ownerArn,omitempty"`
}

type eksAssociation struct {
	ClusterName        string            `json:"clusterName"`
	Namespace          string            `json:"namespace"`
	ServiceAccount     string            `json:"serviceAccount"`
	RoleArn            string            `json:"roleArn"`
	AssociationArn     string            `json:"associationArn"`
	AssociationID      string            `json:"associationId"`
	Tags               map[string]string `json:"tags"`
	OwnerArn           string            `json:"ownerArn,omitempty"`
	TargetRoleArn      string            `json:"targetRoleArn,omitempty"`
	ExternalID         string            `json:"externalId,omitempty"`
	DisableSessionTags bool              `json:"disableSessionTags"`
	Policy             string            `json:"policy,omitempty"`
	// createdAt and modifiedAt are left out: the snapshot has no dates for associations.
}

// podIdentityAssociations returns the cluster's associations, or access denied when they are unknown.
func (eksAPI) podIdentityAssociations(r *request, wd *world) ([]podIdentityAssociation, error) {
	if wd.associations == nil {
		return nil, denied(r, wd)
	}
	return wd.associations, nil
}

func (a eksAPI) listPodIdentityAssociations(w http.ResponseWriter, r *request, wd *world) error {
	all, err := a.podIdentityAssociations(r, wd)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	offset, size, err := eksPage("eks:ListPodIdentityAssociations", q)
	if err != nil {
		return err
	}
	ns, sa := q.Get("namespace"), q.Get("serviceAccount")
	var matched []eksAssociationSummary
	for _, as := range all {
		if (ns == "" || as.namespace == ns) && (sa == "" || as.serviceAccount == sa) {
			matched = append(matched, eksAssociationSummary{ClusterName: wd.cf.Cluster.Name, Namespace: as.namespace,
				ServiceAccount: as.serviceAccount, AssociationArn: as.arn, AssociationID: as.id})
		}
	}
	got, next := page("eks:ListPodIdentityAssociations", matched, offset, size)
	if got == nil {
		got = []eksAssociationSummary{} // EKS always sends the list
	}
	return writeJSON(w, "application/json", r, struct {
		Associations []eksAssociationSummary `json:"associations"`
		NextToken    string                  `json:"nextToken,omitempty"`
	}{Associations: got, NextToken: next})
}

func (a eksAPI) describePodIdentityAssociation(w http.ResponseWriter, r *request, wd *world, id string) error {
	all, err := a.podIdentityAssociations(r, wd)
	if err != nil {
		return err
	}
	for _, as := range all {
		if as.id != id {
			continue
		}
		out := eksAssociation{
			ClusterName: wd.cf.Cluster.Name, Namespace: as.namespace, ServiceAccount: as.serviceAccount,
			RoleArn: as.roleARN, AssociationArn: as.arn, AssociationID: as.id, Tags: map[string]string{},
			TargetRoleArn: as.targetRoleARN, Policy: as.policy,
		}
		if as.targetRoleARN != "" {
			out.ExternalID = fakeUUID(as.arn) // EKS sets one for the target role's trust policy
		}
		return writeJSON(w, "application/json", r, map[string]any{"association": out})
	}
	return &apiError{status: http.StatusNotFound, code: "ResourceNotFoundException",
		message: "No Pod Identity Association found with id " + id + " in cluster " + wd.cf.Cluster.Name + "."}
}
