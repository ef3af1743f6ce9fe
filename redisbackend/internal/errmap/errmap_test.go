package errmap

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

// reply is an error reply of Redis, as go-redis returns it.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

// TestMapPermission: a permission error, whether Redis refused the
// command itself (NOPERM) or a call inside a script, is AuthFailed and
// not transient, and its message says what was refused and where the
// rules are; only WRONGPASS and NOAUTH are refused credentials.
func TestMapPermission(t *testing.T) {
	for _, c := range []struct {
		reply, want string
	}{
		{"NOPERM this user has no permissions to run the 'evalsha' command", "the command EVALSHA"},
		{"NOPERM this user has no permissions to run the 'config|get' command", "the command CONFIG|GET"},
		{"NOPERM this user has no permissions to access one of the keys used as arguments", "a key outside its key patterns"},
		{"NOPERM this user has no permissions to access one of the channels used as arguments", "a channel outside its channel patterns"},
		{"ERR The user executing the script can't run this command or subcommand script: 1586, on @user_script:36.", "a command the script calls"},
		{"ERR The user executing the script can't access at least one of the keys mentioned in the command arguments script: 27a5, on @user_script:1.", "a key outside its key patterns"},
		{"ERR The user executing the script can't publish to the channel mentioned in the command script: 3d37, on @user_script:1.", "a channel outside its channel patterns"},
		{"WRONGPASS invalid username-password pair or user is disabled.", "redis rejected the credentials"},
		{"NOAUTH Authentication required.", "redis rejected the credentials"},
	} {
		err := Map(context.Background(), "acquire", reply(c.reply))
		var le *lock.Error
		if !errors.As(err, &le) || le.Code != lock.CodeAuthFailed || le.Code.Transient() {
			t.Errorf("%q: %v, want a non-transient AuthFailed", c.reply, err)
			continue
		}
		if !strings.Contains(le.Msg, c.want) {
			t.Errorf("%q: message %q, want %q in it", c.reply, le.Msg, c.want)
		}
		denied := !strings.Contains(c.want, "credentials")
		if denied != strings.Contains(le.Msg, ACLDoc) || denied != IsDenied(reply(c.reply)) {
			t.Errorf("%q: message %q, IsDenied %v: want docs/acl.md and IsDenied exactly for a permission error",
				c.reply, le.Msg, IsDenied(reply(c.reply)))
		}
	}
	if IsDenied(errors.New("NOPERM not a reply")) {
		t.Error("IsDenied of an error that is not a Redis reply")
	}
}
