// Command allowall is the transport floor of the e2e suite's overhead benchmark: an HTTPS admission
// webhook on controller-runtime's admission handler that allows everything, in a process of its own as
// karpenter-guard's webhook is. It serves /validate and /mutate, and GET /calls, the number of reviews
// answered so far.
//
//	allowall -listen 127.0.0.1:9443 -cert tls.crt -key tls.key
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync/atomic"

	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9443", "the address to serve on")
	certFile := flag.String("cert", "tls.crt", "the serving certificate")
	keyFile := flag.String("key", "tls.key", "its key")
	flag.Parse()
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("allowall: load the serving certificate: %v", err)
	}
	var calls atomic.Int64
	handler := &ctrlwebhook.Admission{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		calls.Add(1)
		return admission.Allowed("")
	})}
	mux := http.NewServeMux()
	mux.Handle("/validate", handler)
	mux.Handle("/mutate", handler)
	mux.HandleFunc("GET /calls", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, calls.Load())
	})
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("allowall: listen: %v", err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	log.Fatal(srv.ServeTLS(l, "", ""))
}
