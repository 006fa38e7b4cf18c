package fakeslack

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// --- files ---

func (s *Server) apiGetUploadURL(p params) result {
	name := p.str("filename")
	length, err := strconv.Atoi(p.str("length"))
	if name == "" {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: filename")
	}
	if err != nil || length <= 0 {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: length")
	}
	f := &fileState{File: File{ID: "F0" + randID("", 9), Name: name, Title: name, Size: length}, user: s.Opts.BotUserID, created: time.Now().Unix()}
	s.files[f.ID] = f
	return okRes(map[string]any{"upload_url": s.URL + "/upload/v1/" + f.ID + "/" + randAlnum(20), "file_id": f.ID})
}

func (s *Server) apiCompleteUpload(p params) result {
	v, err := p.jsonArg("files")
	arr, ok := v.([]any)
	if err != nil || !ok || len(arr) == 0 {
		return errMsgs("invalid_arguments", "[ERROR] missing required field: files")
	}
	var fs []*fileState
	for _, e := range arr {
		em, _ := e.(map[string]any)
		f := s.files[str(em["id"])]
		if f == nil || !f.uploaded {
			return errRes("file_not_found")
		}
		if t := str(em["title"]); t != "" {
			f.Title = t
		}
		fs = append(fs, f)
	}
	var out []map[string]any
	for _, f := range fs {
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	chID := p.str("channel_id")
	if chID == "" {
		chID = strings.Split(p.str("channels"), ",")[0]
	}
	if chID == "" {
		return okRes(map[string]any{"files": out})
	}
	ch, code := s.postChannelLocked(chID)
	if code != "" {
		return errRes(code)
	}
	m := s.botMsgLocked(ch)
	m.text = p.str("initial_comment")
	if p.str("blocks") != "" && m.text == "" {
		v, err := p.jsonArg("blocks")
		bl, ok := v.([]any)
		if err != nil || !ok {
			return errRes("invalid_blocks_format")
		}
		if chk := validateBlocks(bl, "/blocks"); len(chk.errs) > 0 {
			return errMsgs("invalid_blocks", chk.errs...)
		}
		if len(bl) > 0 {
			m.blocks = normalizeBlocks(bl)
		}
	}
	m.files = fs
	s.threadLocked(ch, m, p.str("thread_ts"))
	for _, f := range fs {
		f.Channel, f.ThreadTS, f.MessageTS = ch.ID, m.threadTS, m.ts
	}
	ch.add(m)
	s.wroteLocked("files.completeUploadExternal", m)
	s.echoNewLocked(ch, m)
	return okRes(map[string]any{"files": out})
}

func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/upload/v1/"), "/")
	var content []byte
	var err error
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
		if err = r.ParseMultipartForm(64 << 20); err == nil {
			if fh := r.MultipartForm.File["file"]; len(fh) > 0 {
				var f io.ReadCloser
				if f, err = fh[0].Open(); err == nil {
					content, err = io.ReadAll(f)
					f.Close()
				}
			} else {
				content = []byte(r.FormValue("file"))
			}
		}
	} else {
		content, err = io.ReadAll(r.Body)
	}
	s.mu.Lock()
	f := s.files[parts[0]]
	switch {
	case r.Method != http.MethodPost:
		s.violateLocked("upload URL called with %s", r.Method)
	case f == nil:
		s.violateLocked("upload to unknown upload URL %s", r.URL.Path)
	case err != nil:
		s.violateLocked("upload %s: unreadable body: %v", f.ID, err)
	case f.uploaded:
		s.violateLocked("upload URL of %s used twice", f.ID)
	default:
		f.Content, f.uploaded = content, true
		if len(content) != f.Size {
			s.violateLocked("upload %s: %d bytes uploaded, length %d declared to files.getUploadURLExternal", f.ID, len(content), f.Size)
		}
	}
	ok := f != nil && err == nil
	s.notifyLocked()
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid upload", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "OK - %d", len(content))
}

func (s *Server) handleFileDownload(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/files-pri/"), "/")
	s.mu.Lock()
	var f *fileState
	if len(parts) > 0 {
		if i := strings.LastIndex(parts[0], "-"); i >= 0 {
			f = s.files[parts[0][i+1:]]
		}
	}
	authed := r.Header.Get("Authorization") == "Bearer "+s.Opts.BotToken
	var content []byte
	dl := FileDownload{Authorized: authed}
	if f != nil {
		content = append(content, f.Content...)
		dl.FileID = f.ID
	}
	s.downloads = append(s.downloads, dl)
	s.mu.Unlock()
	if f == nil || !authed {
		http.Error(w, "file not found or not authorized", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(content)
}
