package bot

import (
	"fmt"
	"testing"

	"github.com/claudeops/claudeops/adapters"
	"github.com/claudeops/claudeops/settings"
)

// BenchmarkSenderCheck: what Deliver asks of the settings for each event
// since the sender is checked per channel (issue 29), against the check
// it replaced, in one binary. The resolver holds 200 channels, each with
// 10 users, 2 admins, a model and a reply mode, and 50 users and a glob
// at the bot's scope; the sender is the last of a list (the bot's for
// list, the channel's for the others: a channel's users replace the
// bot's there), so that list is read to its end.
//
//   - list: the check before, settings.MatchUser over
//     CLAUDEOPS_ALLOWED_USERS, then the bot admins.
//   - channel: Bot.allowed, the channel's users and admins and the
//     wider scopes' (Resolver.MayUse).
//   - channel+reply: that, and the reply setting an unmentioned reply is
//     asked about.
func BenchmarkSenderCheck(b *testing.B) {
	var allowed []string
	for i := range 50 {
		allowed = append(allowed, fmt.Sprintf("U%08d", i))
	}
	allowed = append(allowed, "@*:example.org")
	cfg := Config{AllowedUsers: allowed, Admins: []string{"UROOT"}}
	l := ConfigLayer(cfg)
	for c := range 200 {
		scope := settings.Scope{Level: settings.LevelChannel, Key: fmt.Sprintf("slack/C%08d", c)}
		put := func(n settings.Name, text string) {
			l.Put(n, settings.Value{Text: text, Source: settings.Source{Scope: scope, Origin: settings.FromFile, Line: c + 1}})
		}
		var users string
		for u := range 10 {
			users += fmt.Sprintf("UCH%03d%03d,", c, u)
		}
		put(settings.Users, users[:len(users)-1])
		put(settings.Admins, fmt.Sprintf("UAD%03d,UAE%03d", c, c))
		put(settings.Model, "claude-sonnet-4-5")
		put(settings.Reply, "mention")
	}
	r := settings.New(l, cfg.Admins)
	bot := &Bot{cfg: Config{AllowedUsers: allowed, Scopes: r}}
	ref := adapters.ThreadRef{Platform: "slack", Channel: "C00000123", Thread: "1.2"}
	user := "UCH123009"
	b.Run("list", func(b *testing.B) {
		user := allowed[len(allowed)-2]
		for range b.N {
			if !(settings.MatchUser(bot.cfg.AllowedUsers, user) || r.IsBotAdmin(user)) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("channel", func(b *testing.B) {
		for range b.N {
			if !bot.allowed(ref, user) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("channel+reply", func(b *testing.B) {
		for range b.N {
			if !bot.allowed(ref, user) || r.Get(settings.Where{Platform: "slack", Channel: ref.Channel}, settings.Reply).Text != "mention" {
				b.Fatal("refused")
			}
		}
	})
}
