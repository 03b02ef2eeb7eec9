package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "17": 17, " 512M ": 512 << 20, "4k": 4 << 10, "2G": 2 << 30,
	} {
		if n, ok := Parse(in); !ok || n != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, n, ok, want)
		}
	}
	for _, in := range []string{"", "M", "-1", "1.5M", "12T", "9999999999999999999", "4611686018427387904G"} {
		if n, ok := Parse(in); ok {
			t.Errorf("Parse(%q) = %d, ok", in, n)
		}
	}
}
