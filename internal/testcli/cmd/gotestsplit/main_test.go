package main

import (
	"regexp"
	"strings"
	"testing"
)

func TestFollow(t *testing.T) {
	const p = "example/pkg"
	stream := strings.Join([]string{
		`{"Action":"run","Package":"example/pkg","Test":"TestOK"}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"pass","Package":"example/pkg","Test":"TestOK","Elapsed":75.5}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestBad","Output":"    x_test.go:9: it broke\n"}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}`,
		`{"Action":"fail","Package":"example/pkg","Test":"TestBad","Elapsed":61}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestGolden/case","Output":"    golden differs\n"}`,
		`{"Action":"fail","Package":"example/pkg","Test":"TestGolden/case"}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestGolden","Output":"--- FAIL: TestGolden (0.00s)\n"}`,
		`{"Action":"fail","Package":"example/pkg","Test":"TestGolden"}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestDocker/sub","Output":"    CLAUDEOPS_TEST_DOCKER_IMAGE is not set\n"}`,
		`{"Action":"skip","Package":"example/pkg","Test":"TestDocker/sub"}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestOther","Output":"    no bwrap here\n"}`,
		`{"Action":"skip","Package":"example/pkg","Test":"TestOther"}`,
		`{"Action":"output","Package":"example/pkg","Output":"FAIL\n"}`,
		`{"Action":"output","Package":"example/pkg","Output":"FAIL\texample/pkg\t0.1s\n"}`,
		`{"Action":"fail","Package":"example/pkg"}`,
	}, "\n")
	var out strings.Builder
	skipped, times := follow(strings.NewReader(stream), &out, regexp.MustCompile(`CLAUDEOPS_TEST_DOCKER_IMAGE`))
	want := "gotestsplit: 2 tests took over 60 s:\n    75.5 s  example/pkg TestOK\n    61.0 s  example/pkg TestBad\n"
	if got := slowest(times, 60); got != want {
		t.Errorf("slowest:\n%s\nwant:\n%s", got, want)
	}
	if got := slowest(times, 100); got != "" {
		t.Errorf("none over 100 s, yet: %q", got)
	}
	if got := lines(skipped); got != p+" ^(TestDocker)$\n" {
		t.Errorf("skipped for a pending setup: %q", got)
	}
	for _, want := range []string{"it broke", "--- FAIL: TestBad", "FAIL\texample/pkg", "golden differs", "--- FAIL: TestGolden"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "=== RUN   TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", out.String())
	}
}
