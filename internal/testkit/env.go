package testkit

import "os"

// CLIEnv is the environment of a real claude whose home is home and whose
// model API is the fake one at apiURL (fakeanthropic): no traffic but the
// model's, no update, no telemetry, then extra.
func CLIEnv(home, apiURL string, extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + apiURL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
	}
	return append(env, extra...)
}
