package count

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Of(1, "change"), "1 change"},
		{Of(0, "change"), "0 changes"},
		{Of(2, "entry"), "2 entries"},
		{Of(2, "key"), "2 keys"},
		{Of(2, "process"), "2 processes"},
		{Of(3, "box"), "3 boxes"},
		{Of(2, "patch"), "2 patches"},
		{Word(5, "line"), "lines"},
		{Word(1, "hunk"), "hunk"},
		{Word(2, ""), ""},
		{Grouped(4604, "unexpected change"), "4,604 unexpected changes"},
		{Digits(1234567), "1,234,567"},
		{Digits(12), "12"},
		{Digits(-1234), "-1,234"},
		{Digits(int64(-123)), "-123"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
