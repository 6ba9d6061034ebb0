/*
 * leaf.p4 - the ProFlow leaf switch (P4_16, v1model).
 *
 * A leaf forwards IPv4 by longest prefix (ipv4_lpm: a host port, or an
 * ECMP-like hash over the aggregation uplinks), and lets the controller pin
 * one protected flow to one aggregation uplink (path_select: exact source and
 * destination address, ternary protocol and ports, action set_uplink). The
 * controller installs one path_select entry per direction: the forward
 * 5-tuple on the source host's leaf and the reverse 5-tuple on the
 * destination host's leaf.
 *
 * Telemetry: path_counter counts bytes and packets per path_select entry (the
 * protected flow's throughput); port_rx and port_tx count bytes and packets
 * per ingress and egress port (transmit rates toward each aggregation switch,
 * ingress rates from the hosts).
 *
 * Every P4Runtime object carries an @id, so p4c reproduces the committed
 * leaf.p4info.txtpb exactly:
 *
 *   p4c --target bmv2 --arch v1model --p4runtime-files leaf.p4info.txtpb leaf.p4
 *
 * (p4c writes leaf.json, the BMv2 device config, next to it.)
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_TCP   = 6;
const bit<8>  IP_PROTO_UDP   = 17;

/* One counter cell per v1model port number (bit<9>). */
#define PORT_COUNTER_SIZE 512

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

/* The first four bytes of both TCP and UDP: the ports. */
header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    l4_ports_t l4;
}

struct metadata_t {
    bit<16> l4_src_port;
    bit<16> l4_dst_port;
}

parser LeafParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IP_PROTO_TCP): parse_l4;
            (0, IP_PROTO_UDP): parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        packet.extract(hdr.l4);
        meta.l4_src_port = hdr.l4.src_port;
        meta.l4_dst_port = hdr.l4.dst_port;
        transition accept;
    }
}

control LeafVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control LeafIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    @id(0x12000001)
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_rx;

    @id(0x13000001)
    direct_counter(CounterType.packets_and_bytes) path_counter;

    @id(0x01000001)
    action drop() {
        mark_to_drop(standard_metadata);
    }

    /* Base forwarding to one port (a host, or a single uplink). */
    @id(0x01000002)
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /* Base forwarding spread over num_uplinks consecutive uplink ports
     * starting at base_port, by a hash of the 5-tuple (ECMP-like). */
    @id(0x01000003)
    action ecmp(bit<9> base_port, bit<9> num_uplinks) {
        bit<16> offset;
        hash(offset, HashAlgorithm.crc16, (bit<16>)0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_src_port, meta.l4_dst_port },
             (bit<32>)num_uplinks);
        standard_metadata.egress_spec = base_port + (bit<9>)offset;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    /* The protected flow's path: send it toward one aggregation uplink. */
    @id(0x01000004)
    action set_uplink(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    /* No override: the packet keeps the port ipv4_lpm chose. */
    @id(0x01000005)
    action keep_base_path() { }

    @id(0x02000001)
    table ipv4_lpm {
        key = {
            hdr.ipv4.dst_addr : lpm @name("ipv4_dst");
        }
        actions = { forward; ecmp; drop; }
        default_action = drop();
        size = 1024;
    }

    @id(0x02000002)
    table path_select {
        key = {
            hdr.ipv4.src_addr : exact   @name("ipv4_src");
            hdr.ipv4.dst_addr : exact   @name("ipv4_dst");
            hdr.ipv4.protocol : ternary @name("ip_proto");
            meta.l4_src_port  : ternary @name("l4_src_port");
            meta.l4_dst_port  : ternary @name("l4_dst_port");
        }
        actions = { @tableonly set_uplink; @defaultonly keep_base_path; }
        default_action = keep_base_path();
        counters = path_counter;
        size = 256;
    }

    apply {
        port_rx.count((bit<32>)standard_metadata.ingress_port);
        if (hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
            path_select.apply();
        } else {
            drop();
        }
    }
}

control LeafEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    @id(0x12000002)
    counter(PORT_COUNTER_SIZE, CounterType.packets_and_bytes) port_tx;

    apply {
        port_tx.count((bit<32>)standard_metadata.egress_port);
    }
}

control LeafComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control LeafDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(LeafParser(), LeafVerifyChecksum(), LeafIngress(), LeafEgress(),
         LeafComputeChecksum(), LeafDeparser()) main;
