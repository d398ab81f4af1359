// Command fakeaws serves a ClusterFacts snapshot over the real AWS wire protocols (EKS, IAM, STS, EC2,
// SSM, KMS, Service Quotas) for the end-to-end suite and for demos:
//
//	go run ./internal/fakeaws/cmd/fakeaws --facts cluster-facts.yaml --addr 127.0.0.1:4566 \
//	    --policies policies.yaml --fault 'ec2:DescribeImages=latency:2s' --fault 'iam:GetRole=throttle,count:2'
//
// --policies gives principals identity policies for iam:SimulatePrincipalPolicy to evaluate (see
// fakeaws.LoadPolicies for the file's format).
//
// It prints the base URL on stdout (one line, once listening), logs one line per request on stderr,
// and stops gracefully on SIGINT or SIGTERM. Point the AWS SDK at it with AWS_ENDPOINT_URL=<url> (and
// any credentials and region), or BaseEndpoint in code.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/karpenter-guard/karpenter-guard/facts"
	"github.com/karpenter-guard/karpenter-guard/internal/fakeaws"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "fakeaws:", err)
		os.Exit(1)
	}
}

// faultFlags collects repeated --fault flags.
type faultFlags []string

func (f *faultFlags) String() string     { return strings.Join(*f, " ") }
func (f *faultFlags) Set(v string) error { *f = append(*f, v); return nil }

// run serves until ctx is done; it returns once the server has stopped.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakeaws", flag.ContinueOnError)
	fs.SetOutput(stderr)
	factsFile := fs.String("facts", "", "ClusterFacts snapshot (YAML) to serve (required)")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on; port 0 picks a free port")
	policiesFile := fs.String("policies", "", "YAML file of principals' identity policies, which iam:SimulatePrincipalPolicy evaluates for questions the snapshot's simulations do not answer (format above)")
	quiet := fs.Bool("quiet", false, "do not log requests on stderr")
	var faults faultFlags
	fs.Var(&faults, "fault", "inject a fault, op=kind[:arg][,kind[:arg]…]; kinds: latency:DURATION, hang, throttle, denied, status:CODE, unavailable, malformed, count:N, after:N; op: service:Operation, service:* or * (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fakeaws --facts FILE [--policies FILE] [--addr HOST:PORT] [--fault op=kind[:arg]]... [--quiet]")
		fmt.Fprintln(stderr, "Serves a ClusterFacts snapshot over the AWS wire protocols of EKS, IAM, STS, EC2, SSM, KMS and Service Quotas.")
		fmt.Fprintln(stderr, "A policies file gives principals identity policies for iam:SimulatePrincipalPolicy to evaluate:")
		fmt.Fprintln(stderr, "  principals:")
		fmt.Fprintln(stderr, "    arn:aws:iam::111122223333:role/KarpenterController-prod:")
		fmt.Fprintln(stderr, "      policies: ['{\"Version\":\"2012-10-17\",\"Statement\":[…]}']")
		fmt.Fprintln(stderr, "      permissionsBoundary: '{…}'   # optional")
		fmt.Fprintln(stderr, "Operations:", strings.Join(fakeaws.Operations, " "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *factsFile == "" {
		fs.Usage()
		return errors.New("--facts is required")
	}
	data, err := os.ReadFile(*factsFile)
	if err != nil {
		return fmt.Errorf("read facts: %w", err)
	}
	cf, err := facts.DecodeSnapshotFile(data)
	if err != nil {
		return fmt.Errorf("%s: %w", *factsFile, err)
	}
	var opts []fakeaws.Option
	if *policiesFile != "" {
		data, err := os.ReadFile(*policiesFile)
		if err != nil {
			return fmt.Errorf("read policies: %w", err)
		}
		p, err := fakeaws.LoadPolicies(data)
		if err != nil {
			return fmt.Errorf("%s: %w", *policiesFile, err)
		}
		opts = append(opts, fakeaws.WithPolicies(p))
	}
	if !*quiet {
		opts = append(opts, fakeaws.WithLog(stderr))
	}
	srv := fakeaws.New(cf, opts...)
	for _, spec := range faults {
		op, f, err := fakeaws.ParseFault(spec)
		if err != nil {
			return fmt.Errorf("--fault: %w", err)
		}
		srv.Inject(op, f)
	}
	running, err := srv.Listen(*addr)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, running.URL); err != nil {
		_ = running.Shutdown(context.Background())
		return fmt.Errorf("print the URL: %w", err)
	}
	<-ctx.Done()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := running.Shutdown(shutdownCtx); err != nil {
		return err
	}
	return nil
}
