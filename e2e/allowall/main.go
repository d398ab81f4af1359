// Command allowall is the transport floor of the e2e suite's overhead benchmark: an admission webhook
// that allows everything, served as karpenter-guard serves its own (controller-runtime's webhook
// server, TLS from a certificate directory, the same request metrics), in a process of its own as
// karpenter-guard's webhook is. Besides /validate and /mutate it answers GET /calls with the number of
// reviews answered so far, and GET /metrics with controller-runtime's metrics (the webhook latency).
//
//	allowall -port 9443 -cert-dir DIR
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func main() {
	port := flag.Int("port", 9443, "the port to serve HTTPS on, on 127.0.0.1")
	certDir := flag.String("cert-dir", ".", "the directory of tls.crt and tls.key")
	flag.Parse()
	var calls atomic.Int64
	srv := ctrlwebhook.NewServer(ctrlwebhook.Options{Host: "127.0.0.1", Port: *port, CertDir: *certDir})
	allow := &ctrlwebhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		calls.Add(1)
		return admission.Allowed("")
	})}
	srv.Register("/validate", allow)
	srv.Register("/mutate", allow)
	srv.Register("/calls", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, calls.Load())
	}))
	srv.Register("/metrics", promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		log.Fatalf("allowall: %v", err)
	}
}
