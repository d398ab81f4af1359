package certs

import (
	"net/http"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Collections are the paths of the API collections the rotator reads, each with the one object of it
// the rotator needs: its Secret and its webhook configurations.
type Collections map[string]string

// rotatorCollections are the collections of the rotator of o, by API path.
func rotatorCollections(o RotatorOptions) Collections {
	c := Collections{path.Join("/api/v1/namespaces", o.Namespace, "secrets"): o.SecretName}
	const admission = "/apis/admissionregistration.k8s.io/v1"
	if o.ValidatingWebhook != "" {
		c[admission+"/validatingwebhookconfigurations"] = o.ValidatingWebhook
	}
	if o.MutatingWebhook != "" {
		c[admission+"/mutatingwebhookconfigurations"] = o.MutatingWebhook
	}
	return c
}

// NarrowConfig returns a copy of cfg whose list and watch requests of each collection select its one
// object by name (the field selector metadata.name=NAME, which the API server authorizes against a
// Role's resourceNames). Other requests pass unchanged.
//
// open-policy-agent/cert-controller reads its Secret and webhook configurations through a cache it
// builds itself from the manager's rest.Config, with no way to pass it a field selector: its informers
// list and watch every Secret of the namespace. Narrowing its requests on the way out lets the Role
// grant get, list and watch on the one Secret by name, as controller-runtime's own
// cache.ByObject{Field: ...} would.
func NarrowConfig(cfg *rest.Config, c Collections) *rest.Config {
	narrowed := rest.CopyConfig(cfg)
	narrowed.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return byName{next: next, collections: c}
	})
	return narrowed
}

// byName is the transport of NarrowConfig.
type byName struct {
	next        http.RoundTripper
	collections Collections
}

func (b byName) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return b.next.RoundTrip(req)
	}
	for collection, name := range b.collections {
		if !strings.HasSuffix(req.URL.Path, collection) {
			continue
		}
		q := req.URL.Query()
		selector := fields.OneTermEqualSelector("metadata.name", name).String()
		if s := q.Get("fieldSelector"); s != "" {
			selector = s + "," + selector
		}
		q.Set("fieldSelector", selector)
		// A RoundTripper must not change the request it is given.
		req = req.Clone(req.Context())
		u := *req.URL
		u.RawQuery = q.Encode()
		req.URL = &u
		break
	}
	return b.next.RoundTrip(req)
}

// narrowedManager is a manager whose rest.Config and HTTP client narrow the rotator's requests
// (NarrowConfig); everything else is the manager's.
type narrowedManager struct {
	manager.Manager
	config *rest.Config
	client *http.Client
}

func (m narrowedManager) GetConfig() *rest.Config     { return m.config }
func (m narrowedManager) GetHTTPClient() *http.Client { return m.client }

// narrowManager wraps mgr so that what is built from its configuration reads only the objects of c.
func narrowManager(mgr manager.Manager, c Collections) (manager.Manager, error) {
	cfg := NarrowConfig(mgr.GetConfig(), c)
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return narrowedManager{Manager: mgr, config: cfg, client: client}, nil
}
