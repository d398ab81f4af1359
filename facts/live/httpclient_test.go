package live

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// closedBody is a request body in the state the race leaves it: its data sent, closed by the SDK,
// and its WriteTo answering io.EOF, as smithy-go's closed body does.
type closedBody struct{ io.Reader }

func (closedBody) Close() error                     { return nil }
func (closedBody) WriteTo(io.Writer) (int64, error) { return 0, io.EOF }

// TestSafeRequestBodies: a body whose WriteTo answers io.EOF breaks a plain client's requests and
// never a wrapped one's.
func TestSafeRequestBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	post := func(c interface {
		Do(*http.Request) (*http.Response, error)
	}) error {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, closedBody{strings.NewReader("Action=DescribeImages")})
		req.ContentLength = int64(len("Action=DescribeImages"))
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	// Whether the plain client's call fails depends on which of its goroutines runs first; in a
	// few tries one does.
	failed := false
	for i := 0; i < 50 && !failed; i++ {
		failed = post(&http.Client{}) != nil
	}
	if !failed {
		t.Fatal("50 requests of a plain client with a body whose WriteTo fails all succeeded: the race this guards against no longer happens")
	}
	for i := 0; i < 20; i++ {
		if err := post(SafeRequestBodies(&http.Client{})); err != nil {
			t.Fatalf("request %d through SafeRequestBodies: %v", i, err)
		}
	}
}
