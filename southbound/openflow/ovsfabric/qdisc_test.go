package ovsfabric

import "testing"

func TestRootQdisc(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"qdisc tbf 8001: root refcnt 2 rate 10Mbit burst 13875000b lat 50ms \n", "tbf"},
		{"qdisc noqueue 0: root refcnt 2 \n", "noqueue"},
		{"qdisc fq_codel 0: root refcnt 2 limit 10240p flows 1024\nqdisc ingress ffff: parent ffff:fff1 ----------------\n", "fq_codel"},
		{"", ""},
		{"Cannot find device x\n", ""},
	} {
		if got := rootQdisc(tc.out); got != tc.want {
			t.Errorf("rootQdisc(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}
