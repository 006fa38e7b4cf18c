// Package fakegithub is a fake GitHub REST API for a forge client's tests,
// made from GitHub's published REST description (the npm package
// @octokit/openapi's api.github.com.json, which scripts/test installs and
// names in CLAUDEOPS_TEST_GITHUB_OPENAPI) rather than from our client.
//
// Start serves, below a GitHub Enterprise-style base path (Server.URL ends
// in /api/v3), the operations a forge client calls — pulls/list (state,
// head as owner:branch, base, pages with a Link header), pulls/get,
// pulls/create, pulls/update, issues/create-comment, users/get-authenticated
// (GET /user: the token's user, Server.Login) — keeping repositories,
// pull requests and comments, with GitHub's refusals: 401 without the
// token (Bearer or token), 404 for what is not there, 422 for a second
// open pull request from one head into one base ("A pull request already
// exists for owner:branch."), a head or base that is no branch and no
// commits between them (with CreateRepo's bare git repository, whose
// commits the pull request shows). Every request is checked against the
// description — its query parameters, and its JSON body strictly (a field
// the operation's schema does not name is refused: GitHub would ignore
// it) — and every reply the fake writes against the operation's response
// schema, so the fake cannot drift from GitHub's shapes; what is wrong, or
// a request the description or the fake does not know, fails the test at
// cleanup unless taken (TakeProblems).
//
// Webhooks are GitHub's webhook payloads as its published webhook
// description (@octokit/openapi-webhooks, CLAUDEOPS_TEST_GITHUB_WEBHOOKS)
// has them: Payload makes one of an event and action — every field the
// description requires, placeholders, with the test's own fields put over
// it — and fails the test unless the whole passes the description's
// strict check (a field where GitHub has none is refused), so that a
// trigger's test sends what GitHub sends.
//
// Each description is read once per test binary (Describe,
// DescribeWebhooks); without it the tests skip saying why, unless
// CLAUDEOPS_REQUIRE_GITHUB_OPENAPI=1.
//
// Files: openapi.go (Description: the operations, the checks), server.go
// (Server: routing, auth, the checked reply), pulls.go (the state and the
// operations), shapes.go (GitHub's JSON), webhooks.go (Webhooks).
package fakegithub
