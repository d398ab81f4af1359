package audit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpenter-guard/karpenter-guard/cluster"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/crds"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/prom"
	"github.com/karpenter-guard/karpenter-guard/manifest"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
)

// Loop is the in-cluster audit of serve: a manager runnable that needs the leader lease (one replica
// writes), audits every Interval and, after a short Debounce, whenever an EC2NodeClass, a NodePool or
// aws-auth changes (Trigger). Each audit replaces the policy reports, emits a Kubernetes Event on each
// object with a new finding (rate-limited, never twice for the same finding) and sets the violations
// gauge.
type Loop struct {
	Catalog *validators.Catalog
	Config  *config.Config
	Facts   facts.Provider
	// Cluster holds the watched EC2NodeClasses and NodePools.
	Cluster *cluster.Objects
	// Client writes the reports.
	Client client.Client
	// AWSAuth reads kube-system/aws-auth (the manager's cache, or the API server when a watch is
	// not allowed); nil means Client.
	AWSAuth  client.Reader
	Recorder record.EventRecorder
	Interval time.Duration
	Debounce time.Duration
	Metrics  *Metrics
	Log      logr.Logger

	trigger chan struct{}
	once    sync.Once
	// crds holds the Set of the cluster's Karpenter CRDs between audits (audits run one at a time).
	crds clusterCRDs
	// emitted holds the findings already sent as Events: object UID, rule and message.
	emitted map[string]bool
	events  *rate.Limiter
}

// Metrics are the audit's metrics: the gauge of current violations, the audits run and the policy
// report writes.
type Metrics struct {
	violations   *prometheus.GaugeVec
	runs         *prometheus.CounterVec
	reportWrites *prometheus.CounterVec
}

// NewMetrics creates the audit metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		violations: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "karpenter_guard_violations",
			Help: "Findings of the last audit of the cluster's objects, by rule, kind, name and action (1 per finding).",
		}, []string{"rule", "kind", "name", "action"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_audit_runs_total",
			Help: "Audits of the cluster's objects, by outcome (complete, partial, error: not every policy report written).",
		}, []string{"outcome"}),
		reportWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "karpenter_guard_report_writes_total",
			Help: "Policy reports created, updated or deleted, by outcome (ok, error); each error is logged with the report's name.",
		}, []string{"outcome"}),
	}
	// Both outcomes exist from the start, so that an alert on errors sees a series before the first.
	for _, outcome := range []string{"ok", "error"} {
		m.reportWrites.WithLabelValues(outcome)
	}
	if err := prom.Register(reg, m.violations, m.runs, m.reportWrites); err != nil {
		return nil, err
	}
	return m, nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable. The loop is started by Elected,
// which holds its own lease, or alone (a single replica, --leader-elect=false): it never waits for
// the manager's election, which karpenter-guard does not use.
func (l *Loop) NeedLeaderElection() bool { return false }

func (l *Loop) init() {
	l.once.Do(func() {
		l.trigger = make(chan struct{}, 1)
		l.emitted = map[string]bool{}
		l.events = rate.NewLimiter(rate.Limit(5), 50)
		if l.Metrics == nil {
			l.Metrics, _ = NewMetrics(nil)
		}
	})
}

// Trigger asks for an audit soon (coalesced with other triggers).
func (l *Loop) Trigger() {
	l.init()
	select {
	case l.trigger <- struct{}{}:
	default:
	}
}

// Start implements manager.Runnable: it audits once the watches have synced, then on every tick or
// trigger, until ctx ends.
func (l *Loop) Start(ctx context.Context) error {
	l.init()
	// A replica that stops auditing (shutdown, a lost lease) stops exporting what it found: only
	// the replica that audits says what is violated.
	defer l.Metrics.violations.Reset()
	for l.Cluster.Synced(ctx) != nil {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	tick := time.NewTicker(l.Interval)
	defer tick.Stop()
	l.audit(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-l.trigger:
			// Let a burst of changes settle (kubectl apply of a directory).
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(l.Debounce):
			}
			select {
			case <-l.trigger:
			default:
			}
		}
		l.audit(ctx)
	}
}

func (l *Loop) audit(ctx context.Context) {
	start := time.Now()
	o, err := l.run(ctx)
	switch {
	case err != nil:
		l.Metrics.runs.WithLabelValues("error").Inc()
		l.Log.Error(err, "audit done, but policy reports were not all written", "objects", o.Objects, "findings", len(o.Findings))
	case o.Partial:
		l.Metrics.runs.WithLabelValues("partial").Inc()
		for _, p := range o.Problems {
			l.Log.Info("audit: object not read", "object", strings.TrimPrefix(p.File, "cluster/"), "problem", p.Message)
		}
		l.Log.Info("audit partial: some objects could not be read or some rules evaluated", "objects", o.Objects, "findings", len(o.Findings),
			"notEvaluated", len(o.NotEvaluated), "unreadable", len(o.Problems), "took", time.Since(start))
	default:
		l.Metrics.runs.WithLabelValues("complete").Inc()
		l.Log.V(1).Info("audit", "objects", o.Objects, "findings", len(o.Findings), "took", time.Since(start))
	}
}

func (l *Loop) run(ctx context.Context) (*Outcome, error) {
	objs := &Objects{NodeClasses: l.Cluster.NodeClasses(), NodePools: l.Cluster.NodePools()}
	for key, msg := range l.Cluster.Problems() {
		objs.Problems = append(objs.Problems, manifest.Error{File: "cluster/" + key, Line: 1, Message: msg})
	}
	var r client.Reader = l.Client
	if l.AWSAuth != nil {
		r = l.AWSAuth
	}
	objs.AWSAuth, objs.Problems = readAWSAuth(ctx, r, objs.Problems)
	if set, err := l.crds.get(ctx, l.Client); err != nil {
		l.Log.V(1).Info("validating against the built-in Karpenter CRDs: cannot read the cluster's", "release", crds.Release, "error", err.Error())
	} else {
		objs.CRDs = set
	}
	o := l.evaluate(ctx, objs)
	// The gauge and the Events say what the audit found even when a report could not be written.
	l.publish(o)
	w := &ReportWriter{Client: l.Client, Metrics: l.Metrics, Log: l.Log}
	return o, w.Write(ctx, Reports(o, l.Config.Mode, time.Now()))
}

// publish sets the gauge and emits Events for findings not yet emitted.
func (l *Loop) publish(o *Outcome) {
	l.Metrics.violations.Reset()
	current := map[string]bool{}
	for _, f := range o.Findings {
		l.Metrics.violations.WithLabelValues(f.Rule, f.Object.Kind, f.Object.Name, string(f.Action)).Set(1)
		src := f.Source // the engine sets it on every finding
		if src == nil || l.Recorder == nil || f.Action == config.ActionAudit {
			continue
		}
		uid := uidOf(src)
		key := uid + "\x00" + f.Rule + "\x00" + f.Message
		current[key] = true
		if l.emitted[key] || !l.events.Allow() {
			continue
		}
		l.Recorder.Event(eventTarget(src, uid), corev1.EventTypeWarning, "PolicyViolation", fmt.Sprintf("[%s] %s", f.Rule, f.Message))
		l.emitted[key] = true
	}
	// A finding that is gone may be emitted again if it comes back.
	for k := range l.emitted {
		if !current[k] {
			delete(l.emitted, k)
		}
	}
}

func uidOf(o *objects.Object) string {
	if uid, ok := o.Fields.Value("metadata", "uid").(string); ok && uid != "" {
		return uid
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// eventTarget is the object an Event is about, as the recorder references it.
func eventTarget(o *objects.Object, uid string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(o.APIVersion)
	u.SetKind(o.Kind)
	u.SetName(o.Name)
	u.SetNamespace(o.Namespace)
	u.SetUID(types.UID(uid))
	return u
}

// evaluate runs one audit of objs within the audit's budgets: its time, a whole cluster's questions
// answered from the cache once warm, and its AWS calls (aws.auditCallBudget), so that a cold cluster
// of thousands of objects cannot flood AWS. A question that does not fit is not evaluated, and the
// next audit asks it: with the answers of this one cached, it asks little else.
func (l *Loop) evaluate(ctx context.Context, objs *Objects) *Outcome {
	ctx, cancel := context.WithTimeout(ctx, max(time.Minute, 10*l.Config.AWS.Timeout.Duration))
	defer cancel()
	budget := facts.NewCallBudget(int(l.Config.AWS.AuditCallBudget))
	o := Run(facts.WithCallBudget(ctx, budget), l.Catalog, l.Config, l.Facts, objs)
	if budget.Used() >= budget.Limit() {
		l.Log.Info("audit: its budget of AWS calls (aws.auditCallBudget) is spent; what it could not ask is not evaluated, and the next audit asks it",
			"budget", budget.Limit())
	}
	return o
}
