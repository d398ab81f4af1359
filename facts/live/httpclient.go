package live

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// SafeRequestBodies wraps an SDK HTTP client so that a request body never offers io.WriterTo to
// net/http.
//
// It works around a race between net/http and smithy-go. The SDK closes a request body as soon as
// the response arrives, and once closed, its body's WriteTo returns io.EOF. The transport's writer
// makes one last read of the body after sending it; when that goroutine runs late (a busy CPU), the
// read goes through WriteTo, gets io.EOF, counts it as a failed write and closes the connection while
// the response is still being read: the call fails with "use of closed network connection". Read
// after close returns a plain end of data, which the transport accepts.
//
// A nil client is the SDK's default one; an already wrapped client is returned as it is. The SDK
// applies the timeouts of AWS_DEFAULTS_MODE only to its own client type, so with this wrapper they do
// not apply; the default mode, legacy, sets none. NewClients wraps the loaded configuration's client,
// after AWS_CA_BUNDLE has been applied to it (which needs the SDK's own type); the credential
// providers, built while loading, keep the unwrapped client.
func SafeRequestBodies(c aws.HTTPClient) aws.HTTPClient {
	switch c.(type) {
	case nil:
		return safeBodies{awshttp.NewBuildableClient()}
	case safeBodies:
		return c
	}
	return safeBodies{c}
}

type safeBodies struct{ aws.HTTPClient }

func (c safeBodies) Do(r *http.Request) (*http.Response, error) {
	if _, ok := r.Body.(io.WriterTo); ok && r.Body != http.NoBody {
		r2 := *r // a client must not modify the caller's request
		r2.Body = readCloser{r.Body}
		r = &r2
	}
	return c.HTTPClient.Do(r)
}

// readCloser hides every method of a body but Read and Close.
type readCloser struct{ io.ReadCloser }
