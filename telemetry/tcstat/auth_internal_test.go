package tcstat

import (
	"net/http/httptest"
	"testing"

	"github.com/proflow-sdn/proflow/internal/agenthttp"
)

// Issue 24: "Authorization: bearer TOKEN" was refused; the scheme is
// case-insensitive.
func TestAuthorizedSchemeIgnoresCase(t *testing.T) {
	a := &Agent{cfg: AgentConfig{Token: "s3cret"}, token: agenthttp.NewBearer("s3cret")}
	for header, want := range map[string]bool{
		"Bearer s3cret":  true,
		"bearer s3cret":  true,
		"BEARER  s3cret": true,
		"Bearer wrong":   false,
		"Basic s3cret":   false,
		"s3cret":         false,
		"":               false,
	} {
		req := httptest.NewRequest("GET", "/v1/qdisc", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		if got := a.authorized(req); got != want {
			t.Errorf("Authorization %q: authorized %v, want %v", header, got, want)
		}
	}
}
