package p4runtime

import (
	"errors"
	"fmt"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrNotPrimary marks a refusal because this client is not (or no
	// longer) the primary for a device: the server answered
	// PERMISSION_DENIED, or the stream reported a backup role.
	ErrNotPrimary = errors.New("not the primary client")
	// ErrFenced marks a refusal because this client has been superseded:
	// the device reports a higher election ID for the client's role
	// (Config.Role) than the one it arbitrates with, so a newer owner is
	// primary and this client's writes are refused (PERMISSION_DENIED). An
	// error that matches ErrFenced matches ErrNotPrimary too. A fenced
	// client stays fenced until it arbitrates with a higher election ID
	// (a new Client); Config.TakeOver would do that by itself, so leave it
	// off where election IDs fence owners.
	ErrFenced = errors.New("fenced: a client with a higher election ID is primary for this role")
	// ErrClosed marks a call (Place, Remove, Locate, Collect, Overlay)
	// made after Close.
	ErrClosed = errors.New("client closed")
	// ErrForeignEntry marks a path_select entry with this client's match
	// key whose metadata is not this client's Owner mark: another
	// controller's rule, which the client does not overwrite.
	ErrForeignEntry = errors.New("path entry owned by another controller")
)

// DeviceError reports an RPC a device refused or could not answer. Code is
// the canonical code that explains the failure: for a batch that failed per
// update (status UNKNOWN with p4.v1.Error details), the failed update's or
// request's code; otherwise the RPC's status code.
type DeviceError struct {
	Leaf    string     // the leaf's name
	Device  uint64     // its P4Runtime device ID
	Op      string     // what the client was doing, e.g. "write: modify path_select entry tcp ..."
	Code    codes.Code // the explaining canonical code
	Message string     // the server's message for that code
	Err     error      // the gRPC status error, or a local cause
	// Fenced reports a PERMISSION_DENIED refusal because a client with a
	// higher election ID for this client's role is primary (ErrFenced).
	Fenced bool
}

// Error formats the refusal: leaf, device, operation, code and message,
// and "fenced" for a superseded client.
func (e *DeviceError) Error() string {
	fenced := ""
	if e.Fenced {
		fenced = " (fenced: superseded by a newer primary for its role)"
	}
	return fmt.Sprintf("p4runtime: %s (device %d) %s: %v: %s%s", e.Leaf, e.Device, e.Op, e.Code, e.Message, fenced)
}

// Unwrap returns the underlying gRPC or local error.
func (e *DeviceError) Unwrap() error { return e.Err }

// Is matches ErrNotPrimary for a PERMISSION_DENIED refusal, and ErrFenced
// for one that fencing explains (Fenced).
func (e *DeviceError) Is(target error) bool {
	switch target {
	case ErrNotPrimary:
		return e.Code == codes.PermissionDenied
	case ErrFenced:
		return e.Fenced && e.Code == codes.PermissionDenied
	}
	return false
}

// GRPCStatus returns the explaining code and message as a gRPC status, so
// status.Code(err) reports Code.
func (e *DeviceError) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// deviceError turns an RPC error into a DeviceError, digging the first
// failed p4.v1.Error out of a batch status, and counts it in the metrics.
func (s *session) deviceError(op string, err error) error {
	if err == nil {
		return nil
	}
	de := &DeviceError{Leaf: s.leaf.Name, Device: s.leaf.DeviceID, Op: op, Err: err}
	defer func() { s.m.error(de.Code) }()
	st, ok := status.FromError(err)
	if !ok {
		de.Code, de.Message = status.Code(err), err.Error()
		if de.Code == codes.Unknown {
			de.Code = codes.Internal
		}
		return de
	}
	de.Code, de.Message = st.Code(), st.Message()
	if st.Code() == codes.Unknown {
		for _, d := range st.Details() {
			if pe, ok := d.(*p4v1.Error); ok && codes.Code(pe.GetCanonicalCode()) != codes.OK {
				de.Code, de.Message = codes.Code(pe.GetCanonicalCode()), pe.GetMessage()
				break
			}
		}
	}
	return de
}
