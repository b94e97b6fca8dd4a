"""lab15's model of a RoCE cluster: its state, the dumps of the real tools, the rules of a
lossless configuration, the fixes, and faults to inject.

A state is a dict (JSON-friendly): a site policy, hosts (RDMA NICs and the job's NCCL
environment) and switches. render() writes the dump a collection script would gather on
it, in the formats of the real tools:

  mlnx_qos -i <netdev>      Mellanox/mlnx-tools python/mlnx_qos, pretty_print()
  show_gids                 Mellanox/mlnx-tools sbin/show_gids
  ibv_devinfo -v -d <dev>   rdma-core v44 libibverbs/examples/devinfo.c
  rdma link show            iproute2 rdma/link.c
  rdma statistic show link  iproute2 rdma/stat.c (the mlx5 hw_counters)
  ethtool -S <netdev>       mlx5 ethtool counters (Linux en_stats.c)
  grep -H . <sysfs files>   MLNX_OFED's ECN sysfs, netdev MTU, rdma_cm configfs
  env | grep ^NCCL_         the job's environment
  show roce                 NVIDIA Onyx (switch), as in the Onyx User Manual's example

faults() is the grader's own statement of the rules (the handout states the same ones);
apply_fixes() executes the commands of a fix list on a copy of the state. Nothing here is
shared with the student's C code.
"""

import copy
import ipaddress
import random
import re

CODES_NIC = ["pfc", "trust", "dscp_map", "buffer", "mtu", "ecn_np", "ecn_rp", "cnp",
             "roce_tos", "link"]
CODES_ENV = ["nccl_ib_tc", "nccl_gid_index", "nccl_ib_hca"]
CODES_SWITCH = ["sw_trust", "sw_pfc", "sw_ecn", "sw_cnp"]
CODES = CODES_NIC + CODES_ENV + CODES_SWITCH

POLICY = {"roce_dscp": 26, "roce_prio": 3, "cnp_dscp": 48, "cnp_prio": 6, "mtu": 9000,
          "ecn_min_kb": 150, "ecn_max_kb": 1500, "fabric_subnet": "192.168.0.0/16"}


# --- a healthy state --------------------------------------------------------------------

def default_dscp2prio(policy):
    m = [d >> 3 for d in range(64)]  # the default: DSCP's top three bits
    m[policy["roce_dscp"]] = policy["roce_prio"]
    m[policy["cnp_dscp"]] = policy["cnp_prio"]
    return m


def lossless_nic(policy, dev, netdev, ipv4, mac, extra_gids=()):
    p = policy["roce_prio"]
    return {
        "dev": dev, "netdev": netdev, "ipv4": ipv4, "mac": mac, "state": "ACTIVE",
        "phys": "LINK_UP", "mtu": policy["mtu"], "trust": "dscp",
        "dscp2prio": default_dscp2prio(policy), "dscp_order": "ascending",
        "pfc": [1 if i == p else 0 for i in range(8)],
        "prio2buffer": [1 if i == p else 0 for i in range(8)],
        "buffer_size": [130944, 130944, 0, 0, 0, 0, 0, 0],
        "ecn_np": [1 if i == p else 0 for i in range(8)],
        "ecn_rp": [1 if i == p else 0 for i in range(8)],
        "cnp_dscp": policy["cnp_dscp"], "cnp_prio": policy["cnp_prio"],
        "roce_tos": policy["roce_dscp"] << 2, "ecn_sysfs": True,
        "extra_gids": list(extra_gids),  # IPv6 addresses listed before the IPv4 one
        "traffic": 1,  # carried RoCE traffic (counters move)
    }


def mgmt_nic(dev, netdev, ipv4, mac):
    """A management port: an RDMA device on another network, lossy by design."""
    return {
        "dev": dev, "netdev": netdev, "ipv4": ipv4, "mac": mac, "state": "ACTIVE",
        "phys": "LINK_UP", "mtu": 1500, "trust": "pcp", "dscp2prio": [d >> 3 for d in range(64)],
        "dscp_order": "ascending", "pfc": [0] * 8, "prio2buffer": [0] * 8,
        "buffer_size": [262016, 0, 0, 0, 0, 0, 0, 0], "ecn_np": [0] * 8, "ecn_rp": [0] * 8,
        "cnp_dscp": 48, "cnp_prio": 6, "roce_tos": 0, "ecn_sysfs": True, "extra_gids": [],
        "traffic": 0,
    }


def new_state(rng, hosts=2, nics=2, mgmt=False, seed_name="c"):
    policy = dict(POLICY)
    state = {"policy": policy, "hosts": [], "switches": [], "name": seed_name}
    netdev_names = ["ens1f0np0", "ens2f0np0", "ens3f0np0", "ens4f0np0"]
    for h in range(hosts):
        name = f"gpu{h + 1:02d}"
        host = {"name": name, "nics": [], "env": {}}
        for n in range(nics):
            subnet = 1 + n  # rail n: 192.168.<rail>.0/24
            ip = f"192.168.{subnet}.{10 + h}"
            mac = "0c:42:a1:%02x:%02x:%02x" % (rng.randrange(256), h, n)
            host["nics"].append(lossless_nic(policy, f"mlx5_{n}", netdev_names[n], ip, mac))
        if mgmt:
            mac = "b8:ce:f6:%02x:%02x:%02x" % (rng.randrange(256), h, 9)
            host["nics"].append(mgmt_nic(f"mlx5_{nics}", "eno1np0", f"10.0.0.{20 + h}", mac))
        host["env"] = {"NCCL_IB_HCA": ",".join(n["dev"] for n in host["nics"] if is_fabric(state, n)),
                       "NCCL_IB_GID_INDEX": "3",
                       "NCCL_IB_TC": str(policy["roce_dscp"] << 2)}
        state["hosts"].append(host)
    state["switches"].append({"name": "leaf01", "mode": "lossless", "trust": "L3",
                              "ecn_mode": "ecn, absolute", "ecn_min": policy["ecn_min_kb"],
                              "ecn_max": policy["ecn_max_kb"], "pfc": "enabled",
                              "pfc_prios": [policy["roce_prio"]],
                              "tcs": [[policy["roce_prio"], policy["roce_prio"], "RoCE", "WRR 50%"],
                                      [policy["cnp_prio"], policy["cnp_prio"], "CNP", "Strict"]]})
    return state


def is_fabric(state, nic):
    net = ipaddress.ip_network(state["policy"]["fabric_subnet"])
    return ipaddress.ip_address(nic["ipv4"]) in net


# --- GIDs --------------------------------------------------------------------------------

def eui64(mac):
    b = [int(x, 16) for x in mac.split(":")]
    b[0] ^= 2
    return b[:3] + [0xff, 0xfe] + b[3:]


def gid_table(nic):
    """[(index, 16 bytes, ipv4 or None, 'v1'/'v2')] as the port lists them."""
    ll = [0xfe, 0x80, 0, 0, 0, 0, 0, 0] + eui64(nic["mac"])
    out = [(0, ll, None, "v1"), (1, ll, None, "v2")]
    idx = 2
    for v6 in nic.get("extra_gids", []):
        raw = list(ipaddress.IPv6Address(v6).packed)
        out += [(idx, raw, None, "v1"), (idx + 1, raw, None, "v2")]
        idx += 2
    v4 = [0] * 10 + [0xff, 0xff] + list(ipaddress.IPv4Address(nic["ipv4"]).packed)
    out += [(idx, v4, nic["ipv4"], "v1"), (idx + 1, v4, nic["ipv4"], "v2")]
    return out


def roce_v2_ipv4_index(nic):
    for idx, _, ip, ver in gid_table(nic):
        if ip and ver == "v2":
            return idx
    return None


def sysfs_gid(raw):
    return ":".join("%02x%02x" % (raw[i], raw[i + 1]) for i in range(0, 16, 2))


# --- the dump -----------------------------------------------------------------------------

def render_mlnx_qos(nic, rng):
    out = ["DCBX mode: OS controlled", "Priority trust state: " + nic["trust"]]
    if nic["trust"] == "dscp":
        out.append("dscp2prio mapping:")
        lists = [[] for _ in range(8)]
        order = range(63, -1, -1) if nic.get("dscp_order") == "descending" else range(64)
        for d in order:
            lists[nic["dscp2prio"][d]].append("%02d," % d)
        for p in range(8):
            s = "".join(lists[p])
            while len(s) > 24:
                out.append("\tprio:%d dscp:%s" % (p, s[:24]))
                s = s[24:]
            if s:
                out.append("\tprio:%d dscp:%s" % (p, s))
    out.append("Receive buffer size (bytes): " + "".join("%d," % b for b in nic["buffer_size"]) +
               "max_buffer_size=262016")
    out.append("Cable len: 7")
    out.append("PFC configuration:")
    out.append("\tpriority    0   1   2   3   4   5   6   7")
    out.append("\tenabled     " + "".join("%d   " % v for v in nic["pfc"]) +
               "\n\tbuffer      " + "".join("%d   " % v for v in nic["prio2buffer"]))
    prio_tc = [1, 0, 2, 3, 4, 5, 6, 7]  # IEEE 802.1Q's default: priority 0 -> TC 1
    for tc in range(8):
        ups = [up for up in range(8) if prio_tc[up] == tc]
        if not ups:
            continue
        out.append("tc: %d ratelimit: unlimited, tsa: vendor" % tc)
        for up in ups:
            out.append("\t priority:  %d" % up)
    return "\n".join(out) + "\n"


def render_show_gids(host):
    out = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
           "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    n = 0
    for nic in host["nics"]:
        for idx, raw, ip, ver in gid_table(nic):
            g = sysfs_gid(raw)
            if ip:
                out.append(f"{nic['dev']}\t1\t{idx}\t{g}\t{ip}  \t{ver}\t{nic['netdev']}")
            else:
                out.append(f"{nic['dev']}\t1\t{idx}\t{g}\t\t\t{ver}\t{nic['netdev']}")
            n += 1
    out.append(f"n_gids_found={n}")
    return "\n".join(out) + "\n"


MTU_CODE = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}


def active_mtu(nic):
    """RoCE's MTU: the largest IB MTU that fits the netdev MTU less RoCE's headers."""
    best = 256
    for m in (256, 512, 1024, 2048, 4096):
        if m + 96 <= nic["mtu"]:  # the headers the kernel's iboe_get_mtu() subtracts
            best = m
    return best


def render_devinfo(nic):
    up = nic["state"] == "ACTIVE"
    guid = eui64(nic["mac"])
    guid_s = "%02x%02x:%02x%02x:%02x%02x:%02x%02x" % tuple(guid)
    am = active_mtu(nic)
    out = [f"hca_id:\t{nic['dev']}",
           "\ttransport:\t\t\tInfiniBand (0)",
           "\tfw_ver:\t\t\t\t22.39.1002",
           f"\tnode_guid:\t\t\t{guid_s}",
           f"\tsys_image_guid:\t\t\t{guid_s}",
           "\tvendor_id:\t\t\t0x02c9",
           "\tvendor_part_id:\t\t\t4125",
           "\thw_ver:\t\t\t\t0x0",
           "\tboard_id:\t\t\tMT_0000000359",
           "\tphys_port_cnt:\t\t\t1",
           "\tmax_mr_size:\t\t\t0xffffffffffffffff",
           "\tpage_size_cap:\t\t\t0xfffffffffffff000",
           "\tmax_qp:\t\t\t\t131072",
           "\tmax_qp_wr:\t\t\t32768",
           "\tdevice_cap_flags:\t\t0x21361c36",
           "\tmax_sge:\t\t\t30",
           "\tmax_cq:\t\t\t\t16777216",
           "\tmax_cqe:\t\t\t4194303",
           "\tmax_mr:\t\t\t\t16777216",
           "\tmax_pd:\t\t\t\t8388608",
           "\tmax_qp_rd_atom:\t\t\t16",
           "\tnum_comp_vectors:\t\t63",
           "\t\tport:\t1",
           "\t\t\tstate:\t\t\t%s" % ("PORT_ACTIVE (4)" if up else "PORT_DOWN (1)"),
           "\t\t\tmax_mtu:\t\t4096 (5)",
           "\t\t\tactive_mtu:\t\t%d (%d)" % (am, MTU_CODE[am]),
           "\t\t\tsm_lid:\t\t\t0",
           "\t\t\tport_lid:\t\t0",
           "\t\t\tport_lmc:\t\t0x00",
           "\t\t\tlink_layer:\t\tEthernet",
           "\t\t\tmax_msg_sz:\t\t0x40000000",
           "\t\t\tport_cap_flags:\t\t0x04010000",
           "\t\t\tport_cap_flags2:\t0x0000",
           "\t\t\tmax_vl_num:\t\tinvalid value (0)",
           "\t\t\tbad_pkey_cntr:\t\t0x0",
           "\t\t\tqkey_viol_cntr:\t\t0x0",
           "\t\t\tsm_sl:\t\t\t0",
           "\t\t\tpkey_tbl_len:\t\t1",
           "\t\t\tgid_tbl_len:\t\t255",
           "\t\t\tsubnet_timeout:\t\t0",
           "\t\t\tinit_type_reply:\t0",
           "\t\t\tactive_width:\t\t4X (2)",
           "\t\t\tactive_speed:\t\t50.0 Gbps (64)",
           "\t\t\tphys_state:\t\t%s" % ("LINK_UP (5)" if up else "DISABLED (3)")]
    for idx, raw, ip, ver in gid_table(nic):
        if ver == "v1":
            g = ":".join("%02x%02x" % (raw[i], raw[i + 1]) for i in range(0, 16, 2))
            out.append("\t\t\tGID[%3d]:\t\t%s, RoCE v1" % (idx, g))
        else:
            out.append("\t\t\tGID[%3d]:\t\t%s, RoCE v2" % (idx, ipaddress.IPv6Address(bytes(raw))))
    return "\n".join(out) + "\n\n"


def render_rdma_link(host):
    return "".join(f"link {n['dev']}/1 state {n['state']} physical_state {n['phys']} "
                   f"netdev {n['netdev']} \n" for n in host["nics"])


def counters(state, nic, rng):
    """Counters that tell the truth about the configuration: PFC on the wrong priority
    drops, a disabled notification point marks but sends no CNP, and so on."""
    p = state["policy"]["roce_prio"]
    t = nic["traffic"]
    busy = t * rng.randint(2_000_000, 9_000_000)
    c = {"pause_rx": [0] * 8, "pause_tx": [0] * 8}
    for q in range(8):
        if nic["pfc"][q] and t:
            c["pause_rx"][q] = rng.randint(1_000, 90_000)
            c["pause_tx"][q] = rng.randint(1_000, 90_000)
    lossless_ok = nic["pfc"][p] and nic["trust"] == "dscp" and \
        nic["dscp2prio"][state["policy"]["roce_dscp"]] == p
    c["rx_discards_phy"] = 0 if lossless_ok or not t else rng.randint(5_000, 60_000)
    marked = t * rng.randint(20_000, 400_000)
    c["np_ecn_marked_roce_packets"] = marked
    c["np_cnp_sent"] = marked // rng.randint(8, 30) if nic["ecn_np"][p] else 0
    cnps = t * rng.randint(5_000, 40_000)
    c["rp_cnp_handled"] = cnps if nic["ecn_rp"][p] else 0
    c["rp_cnp_ignored"] = 0 if nic["ecn_rp"][p] else cnps
    c["bytes"] = busy * 4096
    return c


def render_ethtool(nic, c, rng):
    lines = ["NIC statistics:",
             f"     rx_packets: {c['bytes'] // 4096 + rng.randint(0, 999)}",
             f"     tx_packets: {c['bytes'] // 4096 + rng.randint(0, 999)}",
             f"     rx_bytes: {c['bytes']}",
             f"     tx_bytes: {c['bytes'] + rng.randint(0, 99999)}",
             f"     rx_out_of_buffer: 0",
             f"     rx_discards_phy: {c['rx_discards_phy']}",
             f"     tx_discards_phy: 0",
             f"     rx_pause_ctrl_phy: {sum(c['pause_rx'])}",
             f"     tx_pause_ctrl_phy: {sum(c['pause_tx'])}"]
    for q in range(8):
        lines.append(f"     rx_prio{q}_bytes: {c['bytes'] if q == 3 else rng.randint(0, 99999)}")
        lines.append(f"     rx_prio{q}_pause: {c['pause_rx'][q]}")
        lines.append(f"     tx_prio{q}_pause: {c['pause_tx'][q]}")
    lines += ["     tx_pause_storm_warning_events: 0", "     tx_pause_storm_error_events: 0"]
    return "\n".join(lines) + "\n"


def render_rdma_stat(nic, c):
    names = [("rx_write_requests", c["bytes"] // 65536), ("rx_read_requests", 0),
             ("rx_atomic_requests", 0), ("out_of_buffer", 0), ("out_of_sequence", 0),
             ("duplicate_request", 0), ("rnr_nak_retry_err", 0), ("packet_seq_err", 0),
             ("implied_nak_seq_err", 0), ("local_ack_timeout_err", 0),
             ("resp_local_length_error", 0), ("resp_cqe_error", 0), ("req_cqe_error", 0),
             ("req_remote_invalid_request", 0), ("req_remote_access_errors", 0),
             ("resp_remote_access_errors", 0), ("resp_cqe_flush_error", 0),
             ("req_cqe_flush_error", 0), ("roce_adp_retrans", 0), ("roce_adp_retrans_to", 0),
             ("roce_slow_restart", 0), ("roce_slow_restart_cnps", 0),
             ("roce_slow_restart_trans", 0), ("rp_cnp_ignored", c["rp_cnp_ignored"]),
             ("rp_cnp_handled", c["rp_cnp_handled"]),
             ("np_ecn_marked_roce_packets", c["np_ecn_marked_roce_packets"]),
             ("np_cnp_sent", c["np_cnp_sent"]), ("rx_icrc_encapsulated", 0)]
    return f"link {nic['dev']}/1 " + " ".join(f"{k} {v}" for k, v in names) + " \n"


def render_sysfs(nic):
    nd = nic["netdev"]
    out = [f"/sys/class/net/{nd}/mtu:{nic['mtu']}"]
    if nic["ecn_sysfs"]:
        for proto in ("roce_np", "roce_rp"):
            key = "ecn_np" if proto == "roce_np" else "ecn_rp"
            for q in range(8):
                out.append(f"/sys/class/net/{nd}/ecn/{proto}/enable/{q}:{nic[key][q]}")
        out.append(f"/sys/class/net/{nd}/ecn/roce_np/cnp_dscp:{nic['cnp_dscp']}")
        out.append(f"/sys/class/net/{nd}/ecn/roce_np/cnp_802p_prio:{nic['cnp_prio']}")
    else:
        out.append(f"grep: /sys/class/net/{nd}/ecn/roce_np/enable/*: No such file or directory")
        out.append(f"grep: /sys/class/net/{nd}/ecn/roce_rp/enable/*: No such file or directory")
        out.append(f"grep: /sys/class/net/{nd}/ecn/roce_np/cnp_dscp: No such file or directory")
        out.append(f"grep: /sys/class/net/{nd}/ecn/roce_np/cnp_802p_prio: No such file or "
                   f"directory")
    out.append(f"/sys/kernel/config/rdma_cm/{nic['dev']}/ports/1/default_roce_tos:"
               f"{nic['roce_tos']}")
    return "\n".join(out) + "\n"


def render_show_roce(sw, policy):
    pf = "enabled" if sw["pfc"] == "enabled" else "disabled"
    out = ["",
           f"RoCE mode      : {sw['mode']}",
           "LLDP           : disabled",
           f"Port trust mode: {sw['trust']}",
           "",
           "Application TLV:",
           "  Selector: udp",
           "  Protocol: 4791",
           f"  Priority: {policy['roce_prio']}",
           "",
           "Port congestion-control:",
           f"  Mode: {sw['ecn_mode']}",
           f"  Min : {sw['ecn_min']}",
           f"  Max : {sw['ecn_max']}",
           "",
           f"PFC                  : {pf}"]
    if sw["pfc"] == "enabled":
        for q in sorted(sw["pfc_prios"]):
            out.append(f"  switch-priority {q}: enabled")
    out += ["",
            "RoCE used TCs:",
            "---------------------------------------------------",
            "Switch-Priority   TC   Application   ETS",
            "---------------------------------------------------"]
    for sp, tc, app, ets in sw["tcs"]:
        out.append(f"{sp:<17} {tc:<4} {app:<13} {ets}")
    return "\n".join(out) + "\n"


def render(state, seed=0):
    """The dump of state (deterministic for a seed)."""
    rng = random.Random(seed)
    pol = state["policy"]
    parts = ["# CommLab RoCE configuration dump (lab 15): the site's policy, then each node's",
             "# tools as a collection script ran them. Formats: see datasets/lab15/README.md.",
             "### policy", *[f"{k} = {v}" for k, v in pol.items()], ""]

    def section(kind, node, cmd, text):
        parts.append(f"### {kind} {node} $ {cmd}")
        parts.append(text.rstrip("\n"))
        parts.append("")

    for host in state["hosts"]:
        h = host["name"]
        section("host", h, "rdma link show", render_rdma_link(host))
        section("host", h, "show_gids", render_show_gids(host))
        cs = {n["dev"]: counters(state, n, rng) for n in host["nics"]}
        for nic in host["nics"]:
            section("host", h, f"ibv_devinfo -v -d {nic['dev']}", render_devinfo(nic))
            section("host", h, f"mlnx_qos -i {nic['netdev']}", render_mlnx_qos(nic, rng))
            section("host", h, f"ethtool -S {nic['netdev']}", render_ethtool(nic, cs[nic["dev"]], rng))
            section("host", h, f"rdma statistic show link {nic['dev']}/1",
                    render_rdma_stat(nic, cs[nic["dev"]]))
            section("host", h, f"grep -H . /sys/class/net/{nic['netdev']}/mtu "
                               f"/sys/class/net/{nic['netdev']}/ecn/roce_*/enable/* "
                               f"/sys/class/net/{nic['netdev']}/ecn/roce_np/cnp_* "
                               f"/sys/kernel/config/rdma_cm/{nic['dev']}/ports/1/default_roce_tos",
                    render_sysfs(nic))
        env = "".join(f"{k}={v}\n" for k, v in sorted(host["env"].items()))
        section("host", h, "env | grep ^NCCL_", env or "\n")
    for sw in state["switches"]:
        section("switch", sw["name"], "show roce", render_show_roce(sw, pol))
    return "\n".join(parts) + "\n"


# --- the rules ------------------------------------------------------------------------------

def hca_list(value):
    """The device names of an NCCL_IB_HCA value ('mlx5_0:1,mlx5_1', '=mlx5_0'), or None for
    an exclusion list ('^...')."""
    v = value.strip()
    if v.startswith("^"):
        return None
    if v.startswith("="):
        v = v[1:]
    return sorted({x.split(":")[0].strip() for x in v.split(",") if x.strip()})


def faults(state):
    """The faults of state: a sorted list of (code, node, target)."""
    pol = state["policy"]
    p, d, cd, cp = pol["roce_prio"], pol["roce_dscp"], pol["cnp_dscp"], pol["cnp_prio"]
    out = set()
    for host in state["hosts"]:
        h = host["name"]
        fabric = [n for n in host["nics"] if is_fabric(state, n)]
        for n in fabric:
            t = n["dev"]
            if n["pfc"] != [1 if i == p else 0 for i in range(8)]:
                out.add(("pfc", h, t))
            if n["trust"] != "dscp":
                out.add(("trust", h, t))
            elif n["dscp2prio"][d] != p or n["dscp2prio"][cd] != cp:
                out.add(("dscp_map", h, t))
            b = n["prio2buffer"][p]
            if any(n["prio2buffer"][q] == b for q in range(8) if q != p):
                out.add(("buffer", h, t))
            if n["mtu"] < pol["mtu"]:
                out.add(("mtu", h, t))
            if not n["ecn_np"][p]:
                out.add(("ecn_np", h, t))
            if not n["ecn_rp"][p]:
                out.add(("ecn_rp", h, t))
            if n["ecn_sysfs"] and (n["cnp_dscp"] != cd or n["cnp_prio"] != cp):
                out.add(("cnp", h, t))  # without the ECN sysfs nothing shows it
            if n["roce_tos"] >> 2 != d:
                out.add(("roce_tos", h, t))
            if n["state"] != "ACTIVE" or n["phys"] != "LINK_UP":
                out.add(("link", h, t))
        env = host["env"]
        tc = env.get("NCCL_IB_TC")
        if tc is None or not tc.isdigit() or int(tc) >> 2 != d:
            out.add(("nccl_ib_tc", h, "-"))
        idx = {roce_v2_ipv4_index(n) for n in fabric}
        gi = env.get("NCCL_IB_GID_INDEX")
        if gi is not None and (len(idx) != 1 or gi != str(next(iter(idx)))):
            out.add(("nccl_gid_index", h, "-"))
        want = sorted(n["dev"] for n in fabric)
        hca = env.get("NCCL_IB_HCA")
        others = [n for n in host["nics"] if not is_fabric(state, n)]
        if hca is None:
            if others:
                out.add(("nccl_ib_hca", h, "-"))
        elif hca_list(hca) != want:
            out.add(("nccl_ib_hca", h, "-"))
    for sw in state["switches"]:
        s = sw["name"]
        if sw["trust"] != "L3":
            out.add(("sw_trust", s, "-"))
        if sw["pfc"] != "enabled" or sorted(sw["pfc_prios"]) != [p]:
            out.add(("sw_pfc", s, "-"))
        if sw["ecn_mode"] != "ecn, absolute" or sw["ecn_min"] != pol["ecn_min_kb"] or \
                sw["ecn_max"] != pol["ecn_max_kb"]:
            out.add(("sw_ecn", s, "-"))
        if not any(r[0] == cp and r[2] == "CNP" and r[3] == "Strict" for r in sw["tcs"]):
            out.add(("sw_cnp", s, "-"))
    return sorted(out)


# --- fixes ------------------------------------------------------------------------------------

def _ints(text, n):
    v = [int(x) for x in text.split(",") if x != ""]
    if len(v) != n:
        raise ValueError(f"wants {n} values")
    return v


def _nic_by_netdev(host, netdev):
    for n in host["nics"]:
        if n["netdev"] == netdev:
            return n
    raise ValueError(f"no netdev {netdev} on {host['name']}")


def _nic_by_dev(host, dev):
    for n in host["nics"]:
        if n["dev"] == dev:
            return n
    raise ValueError(f"no device {dev} on {host['name']}")


def apply_host_command(host, cmd):
    """Execute one command on host (its NICs' settings, the job's environment). Raises
    ValueError for a command this model does not know."""
    words = cmd.split()
    if not words:
        raise ValueError("empty command")
    if words[0] == "mlnx_qos":
        if len(words) < 3 or words[1] not in ("-i", "--interface"):
            raise ValueError("mlnx_qos needs -i <netdev> first")
        nic = _nic_by_netdev(host, words[2])
        i = 3
        if i >= len(words):
            raise ValueError("mlnx_qos with nothing to set")
        while i < len(words):
            opt = words[i]
            if i + 1 >= len(words):
                raise ValueError(f"{opt} needs a value")
            val = words[i + 1]
            if opt in ("-f", "--pfc"):
                nic["pfc"] = [1 if x else 0 for x in _ints(val, 8)]
            elif opt == "--trust":
                if val not in ("dscp", "pcp"):
                    raise ValueError("--trust dscp|pcp")
                nic["trust"] = val
            elif opt == "--dscp2prio":
                action, dscp, prio = val.split(",")
                if action != "set" or not 0 <= int(dscp) <= 63 or not 0 <= int(prio) <= 7:
                    raise ValueError("--dscp2prio set,DSCP,PRIO")
                nic["dscp2prio"][int(dscp)] = int(prio)
            elif opt == "--prio2buffer":
                nic["prio2buffer"] = _ints(val, 8)
            else:
                raise ValueError(f"mlnx_qos option {opt} is not part of this lab")
            i += 2
        return
    m = re.fullmatch(r"echo\s+(\d+)\s*>\s*/sys/class/net/(\S+)/ecn/(roce_np|roce_rp)/"
                     r"(enable/(\d)|cnp_dscp|cnp_802p_prio)", cmd.strip())
    if m:
        nic = _nic_by_netdev(host, m.group(2))
        v = int(m.group(1))
        if m.group(5) is not None:
            key = "ecn_np" if m.group(3) == "roce_np" else "ecn_rp"
            nic[key][int(m.group(5))] = 1 if v else 0
        elif m.group(3) == "roce_np" and m.group(4) == "cnp_dscp":
            nic["cnp_dscp"] = v
        elif m.group(3) == "roce_np" and m.group(4) == "cnp_802p_prio":
            nic["cnp_prio"] = v
        else:
            raise ValueError("cnp settings live under roce_np")
        return
    m = re.fullmatch(r"ip\s+link\s+set\s+(?:dev\s+)?(\S+)\s+(mtu\s+(\d+)|up)", cmd.strip())
    if m:
        nic = _nic_by_netdev(host, m.group(1))
        if m.group(3):
            nic["mtu"] = int(m.group(3))
        else:
            nic["state"], nic["phys"] = "ACTIVE", "LINK_UP"
        return
    m = re.fullmatch(r"cma_roce_tos\s+-d\s+(\S+)(?:\s+-p\s+1)?\s+-t\s+(\d+)", cmd.strip())
    if m:
        _nic_by_dev(host, m.group(1))["roce_tos"] = int(m.group(2))
        return
    m = re.fullmatch(r"export\s+(NCCL_IB_TC|NCCL_IB_GID_INDEX|NCCL_IB_HCA)=(\S+)", cmd.strip())
    if m:
        host["env"][m.group(1)] = m.group(2)
        return
    m = re.fullmatch(r"unset\s+(NCCL_IB_TC|NCCL_IB_GID_INDEX|NCCL_IB_HCA)", cmd.strip())
    if m:
        host["env"].pop(m.group(1), None)
        return
    raise ValueError("not a host command of this lab")


def apply_switch_command(sw, cmd):
    c = " ".join(cmd.split())
    if re.fullmatch(r"interface ethernet \S+ qos trust (L2|L3|both)", c):
        sw["trust"] = c.split()[-1]
        return
    if c == "dcb priority-flow-control enable force" or c == "dcb priority-flow-control enable":
        sw["pfc"] = "enabled"
        return
    m = re.fullmatch(r"(no )?dcb priority-flow-control priority (\d) enable", c)
    if m:
        q = int(m.group(2))
        prios = set(sw["pfc_prios"])
        if m.group(1):
            prios.discard(q)
        else:
            prios.add(q)
        sw["pfc_prios"] = sorted(prios)
        return
    m = re.fullmatch(r"interface ethernet \S+ traffic-class (\d) congestion-control ecn "
                     r"minimum-absolute (\d+) maximum-absolute (\d+)", c)
    if m:
        if int(m.group(1)) != 3:
            raise ValueError("ECN belongs on the RoCE traffic class")
        sw["ecn_mode"], sw["ecn_min"], sw["ecn_max"] = "ecn, absolute", int(m.group(2)), \
            int(m.group(3))
        return
    m = re.fullmatch(r"interface ethernet \S+ traffic-class (\d) dcb ets strict", c)
    if m:
        tc = int(m.group(1))
        rows = [r for r in sw["tcs"] if r[1] != tc]
        rows.append([tc, tc, "CNP" if tc == 6 else "other", "Strict"])
        sw["tcs"] = sorted(rows)
        return
    raise ValueError("not a switch command of this lab")


def split_commands(fix):
    return [c.strip() for c in re.split(r"\s*;\s*|\s*&&\s*", fix) if c.strip()]


def apply_fixes(state, findings):
    """A copy of state after every finding's fix; and the commands that did not run
    [(finding, command, why)]."""
    s = copy.deepcopy(state)
    bad = []
    hosts = {h["name"]: h for h in s["hosts"]}
    switches = {w["name"]: w for w in s["switches"]}
    for f in findings:
        for cmd in split_commands(f.get("fix", "")):
            try:
                if f["node"] in hosts:
                    apply_host_command(hosts[f["node"]], cmd)
                elif f["node"] in switches:
                    apply_switch_command(switches[f["node"]], cmd)
                else:
                    raise ValueError(f"no node {f['node']}")
            except (ValueError, IndexError) as e:
                bad.append((f, cmd, str(e)))
    return s, bad


# --- injecting faults -------------------------------------------------------------------------

# Each fault kind, and how many ways this model has of breaking it.
VARIANTS = {"pfc": 3, "trust": 1, "dscp_map": 2, "buffer": 1, "mtu": 2, "ecn_np": 2,
            "ecn_rp": 2, "cnp": 2, "roce_tos": 2, "link": 1, "nccl_ib_tc": 3,
            "nccl_gid_index": 3, "nccl_ib_hca": 4, "sw_trust": 1, "sw_pfc": 3, "sw_ecn": 4,
            "sw_cnp": 2}


def _fabric_nics(state):
    return [(h, n) for h in state["hosts"] for n in h["nics"] if is_fabric(state, n)]


def _add_mgmt(state, host, rng):
    if any(not is_fabric(state, n) for n in host["nics"]):
        return
    k = len(host["nics"])
    mac = "b8:ce:f6:%02x:%02x:%02x" % (rng.randrange(256), rng.randrange(256), k)
    host["nics"].append(mgmt_nic(f"mlx5_{k}", "eno1np0", f"10.0.0.{rng.randrange(20, 250)}", mac))


def _break(state, rng, code, v, h, n):
    pol = state["policy"]
    p = pol["roce_prio"]
    if code == "pfc":
        n["pfc"] = [[0] * 8, [1 if i == 4 else 0 for i in range(8)],
                    [1 if i in (3, 4) else 0 for i in range(8)]][v]
    elif code == "trust":
        n["trust"] = "pcp"
    elif code == "dscp_map":
        if v == 0:
            n["dscp2prio"][pol["roce_dscp"]] = rng.choice([0, 1, 2, 4])
        else:
            n["dscp2prio"][pol["cnp_dscp"]] = rng.choice([0, 5, 7])
    elif code == "buffer":
        n["prio2buffer"] = [0] * 8
    elif code == "mtu":
        n["mtu"] = [1500, 4000][v]
    elif code in ("ecn_np", "ecn_rp"):
        n[code][p] = 0
        if v == 1:  # a driver without the ECN sysfs: only the counters show it
            for x in h["nics"]:
                x["ecn_sysfs"] = False
    elif code == "cnp":
        if v == 0:
            n["cnp_dscp"] = rng.choice([0, 46, 56])
        else:
            n["cnp_prio"] = rng.choice([0, 3, 7])
    elif code == "roce_tos":
        n["roce_tos"] = [0, pol["roce_dscp"]][v]
    elif code == "link":
        n["state"], n["phys"] = "DOWN", "DISABLED"
    elif code == "nccl_ib_tc":
        if v == 1:
            h["env"].pop("NCCL_IB_TC", None)
        else:
            h["env"]["NCCL_IB_TC"] = [str(pol["roce_dscp"]), None, "0"][v]
    elif code == "nccl_gid_index":
        if v == 0:
            h["env"]["NCCL_IB_GID_INDEX"] = rng.choice(["0", "1", "2"])
        else:  # one NIC also has an IPv6 address: no single index fits
            h["env"]["NCCL_IB_GID_INDEX"] = "3"
            if v == 2:  # not on the first NIC, whose index alone would look right
                fabric = [x for x in h["nics"] if is_fabric(state, x)]
                n = n if n is not fabric[0] else rng.choice(fabric[1:])
            n["extra_gids"] = ["fd00:%x::%x" % (rng.randrange(1, 99), rng.randrange(1, 999))]
    elif code == "nccl_ib_hca":
        devs = sorted(x["dev"] for x in h["nics"] if is_fabric(state, x))
        if v == 0:
            h["env"]["NCCL_IB_HCA"] = ",".join(d for d in devs if d != n["dev"]) or "mlx5_9"
        elif v == 1:
            h["env"]["NCCL_IB_HCA"] = ",".join(devs + ["mlx5_9"])
        else:
            _add_mgmt(state, h, rng)
            mg = [x["dev"] for x in h["nics"] if not is_fabric(state, x)]
            if v == 2:
                h["env"]["NCCL_IB_HCA"] = ",".join(devs + mg)
            else:
                h["env"].pop("NCCL_IB_HCA", None)
    elif code in CODES_SWITCH:
        sw = rng.choice(state["switches"])
        if code == "sw_trust":
            sw["trust"] = "L2"
        elif code == "sw_pfc":
            if v == 0:
                sw["pfc"] = "disabled"
            else:
                sw["pfc_prios"] = [[4], [3, 4]][v - 1]
        elif code == "sw_ecn":
            if v == 3:
                sw["ecn_mode"] = "ecn, relative"
            else:
                sw["ecn_min"], sw["ecn_max"] = [(1500, 150), (1500, 3000), (15, 150)][v]
        elif code == "sw_cnp":
            rows = [r for r in sw["tcs"] if r[2] != "CNP"]
            if v == 0:
                rows.append([pol["cnp_prio"], pol["cnp_prio"], "CNP", "WRR 10%"])
            sw["tcs"] = rows
    else:
        raise ValueError(code)


def inject(state, rng, code, variant=None):
    """Break state with fault code (variant, or a random one), at a place where it shows:
    the fault must appear in faults(). Returns False when no place fits."""
    v = rng.randrange(VARIANTS[code]) if variant is None else variant
    places = _fabric_nics(state)
    rng.shuffle(places)
    before = set(faults(state))
    for h, n in places[:6]:
        trial = copy.deepcopy(state)
        th = next(x for x in trial["hosts"] if x["name"] == h["name"])
        tn = next(x for x in th["nics"] if x["dev"] == n["dev"])
        _break(trial, rng, code, v, th, tn)
        new = {f[0] for f in set(faults(trial)) - before}
        if new == {code}:
            state.clear()
            state.update(trial)
            return True
    return False


def valid_variation(state, rng):
    """Change state in a way that is still right: what a validator must not report."""
    h = rng.choice(state["hosts"])
    k = rng.randrange(6)
    if k == 0:
        h["env"]["NCCL_IB_TC"] = str((state["policy"]["roce_dscp"] << 2) | rng.randrange(4))
    elif k == 1:
        devs = [x["dev"] for x in h["nics"] if is_fabric(state, x)]
        rng.shuffle(devs)
        h["env"]["NCCL_IB_HCA"] = rng.choice(["", "="]) + ",".join(d + ":1" for d in devs)
    elif k == 2:
        h["env"].pop("NCCL_IB_GID_INDEX", None)
        if rng.random() < 0.5:
            rng.choice(h["nics"])["extra_gids"] = ["fd00:77::%x" % rng.randrange(1, 999)]
    elif k == 3:
        _add_mgmt(state, h, rng)
    elif k == 4:
        for n in h["nics"]:
            n["dscp_order"] = "descending"
    else:  # no ECN sysfs, everything enabled: the counters say it works
        for n in h["nics"]:
            n["ecn_sysfs"] = False


def generated_set(rng, n_cases):
    """n_cases clusters: three healthy ones (with valid variations), the others sharing every
    variant of every fault kind at least once, one to three faults each."""
    work = [(c, v) for c, k in VARIANTS.items() for v in range(k)]
    rng.shuffle(work)
    states = []
    for i in range(n_cases):
        hosts, nics = rng.choice([(2, 2), (3, 2), (2, 4), (4, 2)])
        st = new_state(rng, hosts, nics, mgmt=rng.random() < 0.3, seed_name=f"g{i}")
        for _ in range(rng.randrange(3)):
            valid_variation(st, rng)
        states.append(st)
    faulty = states[3:]
    slot = 0
    for code, v in work:
        for _ in range(len(faulty)):
            if inject(faulty[slot % len(faulty)], rng, code, v):
                slot += 1
                break
            slot += 1
    for st in faulty:  # a few more, anywhere
        if rng.random() < 0.5:
            inject(st, rng, rng.choice(CODES))
    rng.shuffle(states)
    return states


def random_case(rng, name):
    """One cluster with 0 to 3 faults."""
    hosts, nics = rng.choice([(2, 2), (3, 2), (2, 4), (4, 2)])
    state = new_state(rng, hosts, nics, mgmt=rng.random() < 0.4, seed_name=name)
    for _ in range(rng.randrange(3)):
        valid_variation(state, rng)
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
        inject(state, rng, rng.choice(CODES))
    return state
