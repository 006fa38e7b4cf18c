package fakeslack

import (
	"fmt"
	"strings"
	"time"
)

// --- other methods ---

func (s *Server) apiGetPermalink(p params) result {
	ch := s.channelLocked(p.str("channel"))
	if ch == nil {
		return errRes("channel_not_found")
	}
	m := ch.get(p.str("message_ts"))
	if m == nil {
		return errRes("message_not_found")
	}
	return okRes(map[string]any{"channel": ch.ID, "permalink": s.permalink(ch.ID, m)})
}

func (s *Server) permalink(channel string, m *msg) string {
	link := fmt.Sprintf("https://%s.slack.com/archives/%s/p%s", s.Opts.TeamDomain, channel, strings.ReplaceAll(m.ts, ".", ""))
	if m.threadTS != "" && m.threadTS != m.ts {
		link += "?thread_ts=" + m.threadTS + "&cid=" + channel
	}
	return link
}

func (s *Server) apiSetStatus(p params) result {
	ch, code := s.readChannelLocked(p.str("channel_id"))
	if code != "" {
		return errRes(code)
	}
	tts := p.str("thread_ts")
	if tts == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: thread_ts")
	}
	key := ch.ID + "/" + tts
	if p.str("status") == "" {
		delete(s.statuses, key)
	} else {
		var loading []string
		if l := p.str("loading_messages"); l != "" {
			loading = strings.Split(l, ",")
		}
		s.statuses[key] = &statusState{status: p.str("status"), loading: loading, setAt: time.Now()}
	}
	return okRes(nil)
}

func (s *Server) apiAssistantNoop(p params) result {
	if _, code := s.readChannelLocked(p.str("channel_id")); code != "" {
		return errRes(code)
	}
	return okRes(nil)
}

func validEmojiName(n string) bool {
	if n == "" {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("_+-'", r)) {
			return false
		}
	}
	return true
}

func (s *Server) reactionTargetLocked(p params) (*msg, *result) {
	if p.str("timestamp") == "" && p.str("file") == "" {
		r := errRes("no_item_specified")
		return nil, &r
	}
	ch, code := s.readChannelLocked(p.str("channel"))
	if code != "" {
		r := errRes(code)
		return nil, &r
	}
	m := ch.get(p.str("timestamp"))
	if m == nil {
		r := errRes("message_not_found")
		return nil, &r
	}
	if !validEmojiName(p.str("name")) {
		r := errRes("invalid_name")
		return nil, &r
	}
	return m, nil
}

func (s *Server) apiReactionsAdd(p params) result {
	m, fail := s.reactionTargetLocked(p)
	if fail != nil {
		return *fail
	}
	if !m.addReaction(p.str("name"), s.Opts.BotUserID) {
		return errRes("already_reacted")
	}
	return okRes(nil)
}

func (s *Server) apiReactionsRemove(p params) result {
	m, fail := s.reactionTargetLocked(p)
	if fail != nil {
		return *fail
	}
	if !m.removeReaction(p.str("name"), s.Opts.BotUserID) {
		return errRes("no_reaction")
	}
	return okRes(nil)
}

func (m *msg) addReaction(name, user string) bool {
	for _, r := range m.reactions {
		if r.name == name {
			for _, u := range r.users {
				if u == user {
					return false
				}
			}
			r.users = append(r.users, user)
			return true
		}
	}
	m.reactions = append(m.reactions, &reaction{name: name, users: []string{user}})
	return true
}

func (m *msg) removeReaction(name, user string) bool {
	for i, r := range m.reactions {
		if r.name != name {
			continue
		}
		for j, u := range r.users {
			if u == user {
				r.users = append(r.users[:j], r.users[j+1:]...)
				if len(r.users) == 0 {
					m.reactions = append(m.reactions[:i], m.reactions[i+1:]...)
				}
				return true
			}
		}
	}
	return false
}

func (s *Server) apiUsersInfo(p params) result {
	u := s.users[p.str("user")]
	if u == nil {
		return errRes("user_not_found")
	}
	return okRes(map[string]any{"user": s.wireUser(u)})
}

func (s *Server) wireUser(u *User) map[string]any {
	profile := map[string]any{
		"real_name": u.RealName, "real_name_normalized": u.RealName,
		"display_name": u.Name, "display_name_normalized": u.Name,
		"team": s.Opts.TeamID, "image_48": "https://a.slack-edge.com/80588/img/avatars/ava_0001-48.png",
	}
	if u.Email != "" {
		profile["email"] = u.Email
	}
	if u.IsBot && u.ID == s.Opts.BotUserID {
		profile["bot_id"] = s.Opts.BotID
		profile["api_app_id"] = s.Opts.AppID
	}
	return map[string]any{
		"id": u.ID, "team_id": s.Opts.TeamID, "name": u.Name, "deleted": u.Deleted,
		"color": "9f69e7", "real_name": u.RealName, "tz": u.TZ, "tz_label": "Greenwich Mean Time", "tz_offset": 0,
		"profile": profile, "is_admin": false, "is_owner": false, "is_primary_owner": false,
		"is_restricted": false, "is_ultra_restricted": false, "is_bot": u.IsBot, "is_app_user": false,
		"updated": time.Now().Unix(), "is_email_confirmed": !u.IsBot,
	}
}

func (s *Server) apiConversationsInfo(p params) result {
	ch, code := s.readChannelLocked(p.str("channel"))
	if code != "" {
		return errRes(code)
	}
	return okRes(map[string]any{"channel": s.wireChannel(ch)})
}

func (s *Server) wireChannel(ch *channelState) map[string]any {
	if ch.Type == "im" {
		return map[string]any{
			"id": ch.ID, "created": ch.created, "is_im": true, "is_org_shared": false,
			"user": ch.User, "is_user_deleted": false, "priority": 0, "is_archived": ch.Archived,
		}
	}
	return map[string]any{
		"id": ch.ID, "name": ch.Name, "name_normalized": ch.Name,
		"is_channel": ch.Type == "channel", "is_group": ch.Type == "group", "is_im": false,
		"is_mpim": ch.Type == "mpim", "is_private": ch.Type != "channel", "created": ch.created,
		"is_archived": ch.Archived, "is_general": ch.Name == "general", "unlinked": 0,
		"is_shared": false, "is_org_shared": false, "is_ext_shared": false, "is_pending_ext_shared": false,
		"is_member": !ch.NotMember, "creator": "U0ALICE001", "num_members": len(ch.Members) + 1,
		"topic":   map[string]any{"value": "", "creator": "", "last_set": 0},
		"purpose": map[string]any{"value": "", "creator": "", "last_set": 0},
	}
}

func (s *Server) apiConversationsOpen(p params) result {
	users := strings.Split(p.str("users"), ",")
	if p.str("users") == "" || len(users) != 1 {
		if ch := s.channels[p.str("channel")]; ch != nil {
			return okRes(map[string]any{"no_op": true, "already_open": true, "channel": map[string]any{"id": ch.ID}})
		}
		return errRes("users_list_not_supplied")
	}
	if _, ok := s.users[users[0]]; !ok {
		return errRes("user_not_found")
	}
	ch := s.imChannelLocked(users[0])
	return okRes(map[string]any{"no_op": false, "already_open": false, "channel": map[string]any{"id": ch.ID}})
}
