package eval

import "testing"

func TestWindowText(t *testing.T) {
	o := DefaultOptions()
	if got := windowText(o, []string{"S1", "S2"}); got != "120 s" {
		t.Errorf("default: %q, want 120 s", got)
	}
	o.Window = 40
	if got := windowText(o, []string{"S1"}); got != "40 s" {
		t.Errorf("one window: %q, want 40 s", got)
	}
	o.Window, o.Windows = 60, map[string]float64{"S1": 40, "S5": 40, "N1": 60}
	if got, want := windowText(o, []string{"S1", "N1", "S5"}), "each scenario's own (S1, S5: 40 s; N1: 60 s)"; got != want {
		t.Errorf("mixed: %q, want %q", got, want)
	}
}
