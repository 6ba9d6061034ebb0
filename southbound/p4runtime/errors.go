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
}

// Error formats the refusal: leaf, device, operation, code and message.
func (e *DeviceError) Error() string {
	return fmt.Sprintf("p4runtime: %s (device %d) %s: %v: %s", e.Leaf, e.Device, e.Op, e.Code, e.Message)
}

// Unwrap returns the underlying gRPC or local error.
func (e *DeviceError) Unwrap() error { return e.Err }

// Is matches ErrNotPrimary for a PERMISSION_DENIED refusal.
func (e *DeviceError) Is(target error) bool {
	return target == ErrNotPrimary && e.Code == codes.PermissionDenied
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
