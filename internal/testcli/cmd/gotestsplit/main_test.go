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
		`{"Action":"pass","Package":"example/pkg","Test":"TestOK"}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestBad","Output":"    x_test.go:9: it broke\n"}`,
		`{"Action":"output","Package":"example/pkg","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}`,
		`{"Action":"fail","Package":"example/pkg","Test":"TestBad"}`,
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
	skipped := follow(strings.NewReader(stream), &out, regexp.MustCompile(`CLAUDEOPS_TEST_DOCKER_IMAGE`))
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
