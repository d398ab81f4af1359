package main

import (
	"context"
	"crypto/tls"
	"errors"
	goflag "flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlleader "sigs.k8s.io/controller-runtime/pkg/leaderelection"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/karpenter-guard/karpenter-guard/audit"
	"github.com/karpenter-guard/karpenter-guard/certs"
	"github.com/karpenter-guard/karpenter-guard/cluster"
	"github.com/karpenter-guard/karpenter-guard/config"
	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/facts/live"
	"github.com/karpenter-guard/karpenter-guard/objects"
	"github.com/karpenter-guard/karpenter-guard/validators"
	"github.com/karpenter-guard/karpenter-guard/webhook"
)

type serveOptions struct {
	live            liveOptions
	port            int
	bindAddress     string
	mode            string
	webhookTimeout  time.Duration
	certDir         string
	healthAddr      string
	pprofAddr       string
	metricsAddr     string
	factsFile       string
	selfSigned      bool
	certRotation    bool
	namespace       string
	service         string
	secret          string
	validatingName  string
	mutatingName    string
	certDNSNames    []string
	shutdownTimeout time.Duration
	shutdownDelay   time.Duration
	auditInterval   time.Duration
	leaderElect     bool
	zap             zap.Options
}

func newServeCommand(g *globalOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the admission webhook (HTTPS): /validate and /mutate for EC2NodeClasses, NodePools and aws-auth",
		Long: "Serve the admission webhook on controller-runtime's webhook server. Facts come from AWS and the\n" +
			"cluster (--cluster-name), or from a snapshot (--facts) for local runs and demos. The mode and the\n" +
			"per-rule actions come from --config. Certificates are read from --cert-dir and reloaded when\n" +
			"they change; --self-signed generates them there when missing, --cert-rotation keeps them in a\n" +
			"Secret and injects the CA into the webhook configurations.",
		Example: "  karpenter-guard serve --config /etc/karpenter-guard/config.yaml --cluster-name prod-eks\n" +
			"  karpenter-guard serve --facts cluster-facts.yaml --self-signed --cert-dir /tmp/kg-certs",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			go func() {
				<-ctx.Done()
				stop() // a second signal ends the process at once
			}()
			return runServe(ctx, cmd, g, o)
		},
	}
	f := cmd.Flags()
	o.live.addFlags(f)
	f.IntVar(&o.port, "port", 9443, "HTTPS port of the webhook")
	f.StringVar(&o.bindAddress, "bind-address", "", "address the webhook listens on (default: every interface; the host-network deployment passes the pod's IP)")
	f.StringVar(&o.mode, "mode", "", "enforce, warn or dry-run: the GuardConfig's mode, set here by the deployment's mode component together with the webhooks' failurePolicy (an error when --config says otherwise)")
	f.DurationVar(&o.webhookTimeout, "webhook-timeout", 5*time.Second, "the timeoutSeconds of the webhook configurations: aws.timeout must leave at least 1s under it")
	f.StringVar(&o.certDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of tls.crt and tls.key (reloaded when they change)")
	f.StringVar(&o.healthAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address of /metrics (0 disables it)")
	f.StringVar(&o.pprofAddr, "pprof-bind-address", "", "address of Go's /debug/pprof profiles, for diagnosing latency or memory (off when empty; never expose it)")
	f.StringVar(&o.factsFile, "facts", "", "ClusterFacts snapshot to use instead of AWS (local runs, demos, tests)")
	f.BoolVar(&o.selfSigned, "self-signed", false, "generate a CA and serving certificate in --cert-dir when it has none (writes ca.crt beside them)")
	f.BoolVar(&o.certRotation, "cert-rotation", false, "keep the CA and certificate in a Secret, renew them, and inject the CA into the webhook configurations")
	f.StringVar(&o.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of the webhook's Service and Secret (default: POD_NAMESPACE)")
	f.StringVar(&o.service, "service-name", "karpenter-guard", "the webhook's Service (certificate names)")
	f.StringVar(&o.secret, "cert-secret-name", "karpenter-guard-cert", "Secret of --cert-rotation")
	f.StringVar(&o.validatingName, "validating-webhook-configuration", "karpenter-guard", "ValidatingWebhookConfiguration whose CA --cert-rotation keeps")
	f.StringVar(&o.mutatingName, "mutating-webhook-configuration", "karpenter-guard", "MutatingWebhookConfiguration whose CA --cert-rotation keeps (\"\" when mutation is not deployed)")
	f.StringSliceVar(&o.certDNSNames, "cert-dns-names", nil, "more DNS names for the --cert-rotation certificate (a webhook reached by URL)")
	f.DurationVar(&o.auditInterval, "audit-interval", 10*time.Minute, "how often the leader audits the cluster's objects and replaces the policy reports (also on every change); 0 disables the audit")
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect one replica (a Lease in --namespace) to run the audit")
	f.DurationVar(&o.shutdownTimeout, "graceful-shutdown-timeout", 30*time.Second, "how long in-flight reviews may take to finish on shutdown")
	f.DurationVar(&o.shutdownDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, how long to go on answering reviews (with /readyz failing) before the server closes, while the terminating pod is dropped from the Service's endpoints")
	zapFlags := goflag.NewFlagSet("zap", goflag.ContinueOnError)
	o.zap.BindFlags(zapFlags)
	f.AddGoFlagSet(zapFlags)
	return cmd
}

func runServe(ctx context.Context, cmd *cobra.Command, g *globalOptions, o *serveOptions) error {
	log := zap.New(zap.UseFlagOptions(&o.zap), zap.WriteTo(cmd.ErrOrStderr()))
	ctrl.SetLogger(log)
	cat, cfg, err := g.catalog()
	if err != nil {
		return err
	}
	if err := o.settle(cfg, g.configFile); err != nil {
		return err
	}
	if o.selfSigned && o.certRotation {
		return errors.New("--self-signed and --cert-rotation exclude each other")
	}
	if o.certRotation && o.namespace == "" {
		return errors.New("--cert-rotation needs --namespace (or POD_NAMESPACE)")
	}
	if o.selfSigned {
		generated, err := certs.EnsureSelfSigned(o.certDir, certs.Hosts(o.service, o.namespace), 365*24*time.Hour)
		if err != nil {
			return err
		}
		if generated {
			log.Info("generated a self-signed CA and serving certificate", "dir", o.certDir, "ca", o.certDir+"/"+certs.CAFile)
		}
	}

	restCfg, kubeErr := o.live.restConfig()
	if kubeErr != nil {
		if o.factsFile == "" || o.certRotation {
			return fmt.Errorf("serve needs the cluster (for aws-auth, EC2NodeClasses and NodePools): %w", kubeErr)
		}
		// A demo with a snapshot and no cluster: nothing is read from Kubernetes.
		log.Info("no cluster access: aws-auth comes from the snapshot; rules that need the cluster's EC2NodeClasses are not evaluated", "reason", kubeErr.Error())
		restCfg = &rest.Config{Host: "https://127.0.0.1:1"}
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	minTLS := func(c *tls.Config) { c.MinVersion = tls.VersionTLS12 }
	gracefulTimeout := o.shutdownTimeout
	var webhookServer ctrlwebhook.Server = ctrlwebhook.NewServer(ctrlwebhook.Options{Host: o.bindAddress, Port: o.port, CertDir: o.certDir, TLSOpts: []func(*tls.Config){minTLS}})
	rotated := make(chan struct{})
	if o.certRotation {
		webhookServer = webhook.StartAfter(webhookServer, rotated)
	}
	cacheOpts := cluster.CacheOptions()
	if kubeErr != nil {
		cacheOpts = ctrlcache.Options{} // nothing is watched
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		HealthProbeBindAddress:  o.healthAddr,
		PprofBindAddress:        o.pprofAddr,
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		WebhookServer:           webhookServer,
		GracefulShutdownTimeout: &gracefulTimeout,
		Logger:                  log,
		// No manager-wide election: losing it would end the process, webhook included. The audit
		// holds its own lease (addAudit).
	})
	if err != nil {
		return fmt.Errorf("start the webhook: %w", err)
	}

	var known webhook.Cluster // the cluster's objects, as far as the webhook knows them
	var watched *cluster.Objects
	var kube client.Reader
	var watchAWSAuth bool
	if kubeErr == nil {
		if watched, err = cluster.Watch(ctx, mgr.GetCache(), mgr.GetAPIReader()); err != nil {
			return err
		}
		known = watched
		kube, watchAWSAuth = awsAuthReader(ctx, mgr, log)
	}
	provider, closeFacts, err := serveFacts(ctx, o, cfg, kube, restCfg.Host, cmd)
	if err != nil {
		return err
	}
	defer closeFacts()

	metrics, err := webhook.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return err
	}
	reviewer := webhook.NewReviewer(cat, cfg, provider, known, metrics, log.WithName("review"))
	webhook.Register(mgr.GetWebhookServer(), reviewer, webhook.DefaultLimits())

	if watched != nil && o.auditInterval > 0 {
		if err := addAudit(ctx, mgr, restCfg, o, cat, cfg, provider, watched, kube, watchAWSAuth, log); err != nil {
			return err
		}
	}
	certsReady := closedChannel()
	if o.certRotation {
		if err := certs.AddRotator(mgr, certs.RotatorOptions{CertDir: o.certDir, Namespace: o.namespace, SecretName: o.secret,
			Service: o.service, ValidatingWebhook: o.validatingName, MutatingWebhook: o.mutatingName, ExtraDNSNames: o.certDNSNames,
			Ready: rotated}); err != nil {
			return err
		}
		certsReady = rotated
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ready", readiness(ctx, mgr, certsReady, known)); err != nil {
		return err
	}
	log.Info("serving", "port", o.port, "mode", cfg.Mode, "facts", factsSource(o), "onError", cfg.AWS.OnError, "budget", cfg.AWS.Timeout.Duration)
	mgrCtx, stopMgr := drained(ctx, o.shutdownDelay, log)
	defer stopMgr()
	if err := mgr.Start(mgrCtx); err != nil {
		return fmt.Errorf("webhook: %w", err)
	}
	return nil
}

// minTimeoutMargin is what aws.timeout must leave under the webhook's timeoutSeconds: the time to
// evaluate, build the answer and send it once AWS has had its budget.
const minTimeoutMargin = time.Second

// settle applies --mode to the configuration and checks the settings that only make sense together:
// a --mode that contradicts the configuration file's, and an aws.timeout too close to the API server's
// timeout for the webhook (past it, the API server gives up first and applies the failure policy, and
// the review's verdict, warnings and "not verified" notes are lost).
func (o *serveOptions) settle(cfg *config.Config, configFile string) error {
	if err := applyMode(cfg, o.mode, configFile); err != nil {
		return err
	}
	if o.webhookTimeout <= 0 {
		return fmt.Errorf("--webhook-timeout %v: give the webhook configurations' timeoutSeconds", o.webhookTimeout)
	}
	if budget := cfg.AWS.Timeout.Duration; budget > o.webhookTimeout-minTimeoutMargin {
		return fmt.Errorf("aws.timeout %v leaves less than %v under the webhook's timeoutSeconds (%v, --webhook-timeout): "+
			"the API server would give up on reviews waiting for AWS; set aws.timeout to at most %v, or raise timeoutSeconds (at most 30) and --webhook-timeout together",
			budget, minTimeoutMargin, o.webhookTimeout, o.webhookTimeout-minTimeoutMargin)
	}
	return nil
}

// applyMode sets cfg's mode from a --mode flag ("": the GuardConfig's). A flag that contradicts a mode
// the GuardConfig sets is an error, not a silent override.
func applyMode(cfg *config.Config, flag, configFile string) error {
	if flag == "" {
		return nil
	}
	mode := config.Mode(flag)
	switch mode {
	case config.ModeEnforce, config.ModeWarn, config.ModeDryRun:
	default:
		return fmt.Errorf("--mode %q: expected enforce, warn or dry-run", flag)
	}
	if cfg.ModeSet && cfg.Mode != mode {
		return fmt.Errorf("--mode %s contradicts mode: %s in %s: set the mode in one place (with the mode components of the deployment, remove mode from the GuardConfig)", mode, cfg.Mode, configFile)
	}
	cfg.Mode = mode
	return nil
}

// addAudit adds the in-cluster audit: run by the leader, every --audit-interval and on every change of
// an EC2NodeClass, a NodePool or aws-auth.
func addAudit(ctx context.Context, mgr ctrl.Manager, restCfg *rest.Config, o *serveOptions, cat *validators.Catalog, cfg *config.Config, p facts.Provider,
	watched *cluster.Objects, awsAuth client.Reader, watchAWSAuth bool, log logr.Logger) error {
	if o.leaderElect && o.namespace == "" {
		return errors.New("the audit's leader election needs --namespace (or POD_NAMESPACE), or --leader-elect=false for a single replica")
	}
	m, err := audit.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return err
	}
	loop := &audit.Loop{Catalog: cat, Config: cfg, Facts: p, Cluster: watched, Client: mgr.GetClient(), AWSAuth: awsAuth,
		Recorder: mgr.GetEventRecorderFor("karpenter-guard"), Interval: o.auditInterval, Debounce: 3 * time.Second,
		Metrics: m, Log: log.WithName("audit")}
	watched.OnChange(loop.Trigger)
	var runnable manager.Runnable = loop
	if o.leaderElect {
		lock, err := ctrlleader.NewResourceLock(restCfg, mgr, ctrlleader.Options{LeaderElection: true,
			LeaderElectionID: "karpenter-guard-audit", LeaderElectionNamespace: o.namespace, RenewDeadline: 10 * time.Second})
		if err != nil {
			return fmt.Errorf("the audit's lease: %w", err)
		}
		runnable = &audit.Elected{Runnable: loop, Lock: lock, Log: log.WithName("audit")}
	}
	if watchAWSAuth {
		inf, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil {
			return fmt.Errorf("watch aws-auth: %w", err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { loop.Trigger() },
			UpdateFunc: func(any, any) { loop.Trigger() },
			DeleteFunc: func(any) { loop.Trigger() },
		}); err != nil {
			return fmt.Errorf("watch aws-auth: %w", err)
		}
	}
	return mgr.Add(runnable)
}

// awsAuthReader returns the reader of kube-system/aws-auth for the reviews and the audit, and whether
// it can be watched. Normally that is the manager's cache (a watch of that one ConfigMap). When RBAC
// does not allow reading it, a watch would never sync: the manager would wait for it before starting
// the audit, and every review would wait for it until its deadline. Then aws-auth is read directly,
// each read answering "not allowed" with the grant to add, and nothing watches it.
func awsAuthReader(ctx context.Context, mgr ctrl.Manager, log logr.Logger) (client.Reader, bool) {
	err := mgr.GetAPIReader().Get(ctx, client.ObjectKey{Namespace: objects.AWSAuthNamespace, Name: objects.AWSAuthName}, &corev1.ConfigMap{})
	if apierrors.IsForbidden(err) {
		log.Error(err, "not allowed to read kube-system/aws-auth: the rules that need it are not evaluated, and the audit does not follow its edits; grant get, list and watch on it (manifests/base/rbac.yaml, Role karpenter-guard-aws-auth)")
		return mgr.GetAPIReader(), false
	}
	return mgr.GetClient(), true
}

// serveFacts builds the facts provider of the webhook: the snapshot of --facts, else live.
func serveFacts(ctx context.Context, o *serveOptions, cfg *config.Config, kube client.Reader, server string, cmd *cobra.Command) (facts.Provider, func(), error) {
	if o.factsFile != "" {
		snap, err := loadFactsFile(o.factsFile)
		return snap, func() {}, err
	}
	if o.live.clusterName == "" {
		return nil, nil, errors.New("serve needs --cluster-name for live facts, or --facts FILE")
	}
	m, err := live.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return nil, nil, err
	}
	p, awsCfg, err := o.live.newProvider(ctx, cfg, kube, server, cmd.ErrOrStderr(), m)
	if err != nil {
		return nil, nil, err
	}
	// A webhook must not stop the cluster: without credentials it still starts, answers per
	// aws.onError, and says why in its log and in every review's warnings.
	if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
		ctrl.Log.Error(err, "no AWS credentials: every fact from AWS is unknown until EKS Pod Identity or IRSA gives the service account a role")
	}
	// The region's instance types take several pages to read: fetch them now, so that the first
	// NodePool review finds them in the cache instead of waiting for them past aws.timeout.
	go func() { _, _ = p.InstanceTypes(ctx) }()
	return p, p.Close, nil
}

func factsSource(o *serveOptions) string {
	if o.factsFile != "" {
		return "snapshot " + o.factsFile
	}
	return "live, cluster " + o.live.clusterName
}

// drained returns a context that ends delay after ctx (the shutdown signal), or when stop is called:
// the API server sends reviews to the Service's endpoints, and dropping a terminating pod from them
// takes a moment to reach it; a server closing at once would fail the reviews still routed to it
// (and, with failurePolicy Fail, the applies behind them). Meanwhile /readyz fails (readiness).
func drained(ctx context.Context, delay time.Duration, log logr.Logger) (_ context.Context, stop func()) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-out.Done(): // stopped for another reason (the manager failed to start)
			return
		case <-ctx.Done():
		}
		log.Info("shutting down: not ready, serving reviews still routed here", "for", delay)
		select {
		case <-out.Done():
		case <-time.After(delay):
		}
		cancel()
	}()
	return out, cancel
}

// readiness is ready once the certificates are in place and served, and the watches have synced, until
// shutdown begins (ctx ends).
func readiness(ctx context.Context, mgr ctrl.Manager, certsReady <-chan struct{}, known webhook.Cluster) healthz.Checker {
	started := mgr.GetWebhookServer().StartedChecker()
	return func(req *http.Request) error {
		if ctx.Err() != nil {
			return errors.New("shutting down")
		}
		select {
		case <-certsReady:
		default:
			return errors.New("certificates are not ready")
		}
		if err := started(req); err != nil {
			return fmt.Errorf("webhook server not serving: %w", err)
		}
		if known != nil {
			if err := known.Synced(req.Context()); err != nil {
				return err
			}
		}
		return nil
	}
}

func closedChannel() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
