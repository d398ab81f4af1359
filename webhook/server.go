package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Paths the webhook serves.
const (
	ValidatePath = "/validate"
	MutatePath   = "/mutate"
)

// Limits bound what a client may send.
type Limits struct {
	// MaxRequestBytes is the largest AdmissionReview accepted.
	MaxRequestBytes int64
	// BodyReadTimeout bounds reading a request body: a client that sends slowly is cut off rather than
	// holding a connection (controller-runtime's server limits only the headers, to 32 s).
	BodyReadTimeout time.Duration
}

// DefaultLimits: 3 MiB, since an EC2NodeClass, a NodePool or aws-auth (ConfigMaps hold at most 1 MiB),
// twice over (object and oldObject), fits with room to spare; 10 s to send it.
func DefaultLimits() Limits {
	return Limits{MaxRequestBytes: 3 << 20, BodyReadTimeout: 10 * time.Second}
}

// Register adds /validate and /mutate to the webhook server.
func Register(srv webhook.Server, r *Reviewer, l Limits) {
	srv.Register(ValidatePath, Guard(&webhook.Admission{Handler: admission.HandlerFunc(r.Validate)}, l))
	srv.Register(MutatePath, Guard(&webhook.Admission{Handler: admission.HandlerFunc(r.Mutate)}, l))
}

// Guard reads the request body before h does, refusing one over the size limit with 413 and one that
// does not arrive in time with 408, each with a message that says so.
func Guard(h http.Handler, l Limits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > l.MaxRequestBytes {
			tooLarge(w, r.ContentLength, l)
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(l.BodyReadTimeout))
		buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+1))
		_, err := buf.ReadFrom(io.LimitReader(r.Body, l.MaxRequestBytes+1))
		body := buf.Bytes()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			http.Error(w, fmt.Sprintf("karpenter-guard: the AdmissionReview did not arrive within %v", l.BodyReadTimeout), http.StatusRequestTimeout)
			return
		case err != nil:
			http.Error(w, "karpenter-guard: reading the AdmissionReview: "+err.Error(), http.StatusBadRequest)
			return
		case int64(len(body)) > l.MaxRequestBytes:
			tooLarge(w, -1, l)
			return
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		r.Body = http.NoBody // controller-runtime answers "request body is empty" for it
		if len(body) > 0 {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}

func tooLarge(w http.ResponseWriter, size int64, l Limits) {
	what := "the AdmissionReview is larger"
	if size > 0 {
		what = fmt.Sprintf("the AdmissionReview (%d bytes) is larger", size)
	}
	http.Error(w, fmt.Sprintf("karpenter-guard: %s than the %d bytes it accepts: EC2NodeClasses, NodePools and aws-auth are far smaller", what, l.MaxRequestBytes), http.StatusRequestEntityTooLarge)
}

// StartAfter returns srv starting only once ready is closed: the self-managed certificates are
// written into the certificate directory after start-up, and controller-runtime's server needs them
// there when it starts.
func StartAfter(srv webhook.Server, ready <-chan struct{}) webhook.Server {
	return &startAfter{Server: srv, ready: ready}
}

type startAfter struct {
	webhook.Server
	ready <-chan struct{}
}

// Start implements manager.Runnable.
func (s *startAfter) Start(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.Server.Start(ctx)
	case <-ctx.Done():
		return nil
	}
}
