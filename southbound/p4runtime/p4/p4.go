// Package p4 holds the ProFlow leaf switch program, leaf.p4 (P4_16 for the
// v1model architecture), and its P4Info, leaf.p4info.txtpb, embedded so a
// controller or a test target can load them without files on disk.
//
// # The program
//
// A leaf forwards IPv4 by longest prefix (table ipv4_lpm: forward to one
// port, or ecmp over the aggregation uplinks) and lets the controller pin the
// protected flow to one aggregation uplink (table path_select: exact IPv4
// source and destination, ternary protocol and L4 ports, action
// set_uplink(port)). path_select carries a direct counter (bytes and packets
// per entry); the indexed counters port_rx and port_tx count bytes and
// packets per ingress and egress port.
//
// # Compiling for BMv2
//
// On a machine with p4c (none is installable on the project's machines):
//
//	p4c --target bmv2 --arch v1model --p4runtime-files leaf.p4info.txtpb leaf.p4
//
// writes leaf.json (the BMv2 device config, sent as p4_device_config) and
// reproduces leaf.p4info.txtpb: every object carries an @id annotation, and
// the package tests check the P4Info against the source.
//
// # Concurrency
//
// The functions return fresh values on every call; the package holds no
// mutable state.
package p4

import (
	_ "embed"
	"fmt"

	p4configv1 "github.com/p4lang/p4runtime/go/p4/config/v1"
	"google.golang.org/protobuf/encoding/prototext"
)

//go:embed leaf.p4
var leafSource string

//go:embed leaf.p4info.txtpb
var leafP4InfoText []byte

// LeafSource returns the text of leaf.p4.
func LeafSource() string { return leafSource }

// LeafP4InfoText returns leaf.p4info.txtpb, the P4Info of leaf.p4 in
// protobuf text format (a copy the caller may keep).
func LeafP4InfoText() []byte { return append([]byte(nil), leafP4InfoText...) }

// Names of the leaf program's P4Runtime objects, as they appear in the P4Info.
const (
	// PathTable is the per-flow path-selection table.
	PathTable = "LeafIngress.path_select"
	// RouteTable is the base IPv4 forwarding table.
	RouteTable = "LeafIngress.ipv4_lpm"
	// SetUplinkAction sends a path_select hit toward one aggregation uplink.
	SetUplinkAction = "LeafIngress.set_uplink"
	// KeepBasePathAction is path_select's default action: no override.
	KeepBasePathAction = "LeafIngress.keep_base_path"
	// ForwardAction sends a packet to one port (ipv4_lpm).
	ForwardAction = "LeafIngress.forward"
	// ECMPAction spreads packets over consecutive uplink ports (ipv4_lpm).
	ECMPAction = "LeafIngress.ecmp"
	// DropAction drops a packet (ipv4_lpm's default).
	DropAction = "LeafIngress.drop"
	// PathCounter is path_select's direct counter (bytes and packets).
	PathCounter = "LeafIngress.path_counter"
	// PortRxCounter counts bytes and packets per ingress port.
	PortRxCounter = "LeafIngress.port_rx"
	// PortTxCounter counts bytes and packets per egress port.
	PortTxCounter = "LeafEgress.port_tx"
)

// Match fields of PathTable, in key order (field IDs 1 to 5).
const (
	FieldIPv4Src   = "ipv4_src"    // exact, 32 bits
	FieldIPv4Dst   = "ipv4_dst"    // exact, 32 bits
	FieldIPProto   = "ip_proto"    // ternary, 8 bits
	FieldL4SrcPort = "l4_src_port" // ternary, 16 bits
	FieldL4DstPort = "l4_dst_port" // ternary, 16 bits
)

// ParamPort is the single parameter of SetUplinkAction and ForwardAction: a
// v1model port number (9 bits).
const ParamPort = "port"

// PortBits is the width of a v1model port number.
const PortBits = 9

// LeafP4Info parses the embedded P4Info and returns a new message.
func LeafP4Info() (*p4configv1.P4Info, error) {
	info := new(p4configv1.P4Info)
	if err := prototext.Unmarshal(leafP4InfoText, info); err != nil {
		return nil, fmt.Errorf("p4: parse leaf.p4info.txtpb: %w", err)
	}
	return info, nil
}
