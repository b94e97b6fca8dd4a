/* test_topo.c: cmocka tests of the topology parsers against recorded and malformed files.
 * Run from the repository root: the data is found under datasets/ and tests/topo/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, len = 0, k;
    do {
        if (len + 4096 + 1 > cap) {
            cap = 2 * cap + 8192;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        k = fread(buf + len, 1, 4096, f);
        len += k;
    } while (k > 0);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static char *to_json(const cl_topo *t)
{
    char *s = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&s, &n);
    assert_non_null(m);
    assert_int_equal(cl_topo_write_json(t, m), CL_OK);
    fclose(m);
    return s;
}

static cl_result parse_string(const char *text, cl_topo *t)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    cl_result rc =
        text[0] == '<' ? cl_topo_parse_nccl(f, "mem", t) : cl_topo_parse_smi(f, "mem", t);
    fclose(f);
    return rc;
}

/* Every file of dir ending in suffix parses and equals tests/topo/expected/<file>.json. */
static int check_dir(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    cl_topo *t = malloc(sizeof(*t));
    assert_non_null(t);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), s = strlen(suffix);
        if (n <= s || strcmp(e->d_name + n - s, suffix) != 0)
            continue;
        char path[512], exp_path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        snprintf(exp_path, sizeof(exp_path), "tests/topo/expected/%s.json", e->d_name);
        cl_result rc = cl_topo_load(path, t);
        if (rc != CL_OK)
            fail_msg("%s: %s", path, cl_last_error());
        char *got = to_json(t), *want = slurp(exp_path);
        if (want == NULL)
            fail_msg("missing %s", exp_path);
        if (strcmp(got, want) != 0)
            fail_msg("%s differs from %s:\n got: %s\nwant: %s", path, exp_path, got, want);
        free(got);
        free(want);
        count++;
    }
    closedir(d);
    free(t);
    return count;
}

static void test_datasets_match_expected(void **state)
{
    (void)state;
    assert_true(check_dir("datasets/topologies", ".topo.txt") >= 5);
    assert_true(check_dir("datasets/topologies", ".nccl.xml") >= 2);
}

static void test_real_matrices_match_expected(void **state)
{
    (void)state;
    assert_true(check_dir("tests/topo/real", ".topo.txt") >= 5);
}

static void test_legend_codes(void **state)
{
    (void)state;
    static const struct {
        const char *code;
        cl_link_kind kind;
        int nv;
    } ok[] = {{"X", CL_LINK_SELF, 0},         {"NV1", CL_LINK_NVLINK, 1},
              {"NV12", CL_LINK_NVLINK, 12},   {"NV18", CL_LINK_NVLINK, 18},
              {"NV100", CL_LINK_NVLINK, 100}, {"PIX", CL_LINK_PIX, 0},
              {"PXB", CL_LINK_PXB, 0},        {"PHB", CL_LINK_PHB, 0},
              {"NODE", CL_LINK_NODE, 0},      {"SYS", CL_LINK_SYS, 0}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cl_link l;
        assert_int_equal(cl_link_from_code(ok[i].code, &l), CL_OK);
        assert_int_equal(l.kind, ok[i].kind);
        assert_int_equal(l.nvlinks, ok[i].nv);
        assert_string_equal(l.code, ok[i].code);
    }
    static const char *bad[] = {"", "NV", "NV0", "NVx", "nv4", "SYSX", "PIXX", "Y", "NV1234"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cl_link l;
        assert_int_equal(cl_link_from_code(bad[i], &l), CL_ERR_PARSE);
    }
    assert_string_equal(cl_link_kind_name(CL_LINK_NVLINK), "NV");
    assert_string_equal(cl_link_kind_name(CL_LINK_NODE), "NODE");
}

static void test_nic_legend_resolution(void **state)
{
    (void)state;
    cl_topo *t = malloc(sizeof(*t));
    assert_int_equal(cl_topo_load("datasets/topologies/hgx-a100.topo.txt", t), CL_OK);
    int i = cl_topo_find(t, "NIC7");
    assert_int_equal(i, cl_topo_find(t, "mlx5_7"));
    assert_string_equal(t->dev[i].name, "mlx5_7");
    assert_string_equal(t->dev[i].label, "NIC7");
    assert_int_equal(t->dev[i].kind, CL_DEV_NIC);
    assert_int_equal(cl_topo_gpu_count(t), 8);
    assert_int_equal(t->ndevices, 18);
    /* Old driver: NIC columns carry the device names directly. */
    assert_int_equal(cl_topo_load("datasets/topologies/dgx1-v100.topo.txt", t), CL_OK);
    i = cl_topo_find(t, "mlx5_2");
    assert_int_equal(i, 8);
    assert_string_equal(t->dev[i].label, "mlx5_2");
    assert_int_equal(t->link[i][4].kind, CL_LINK_PIX);
    assert_int_equal(t->link[0][3].nvlinks, 2);
    assert_int_equal(cl_topo_find(t, "GPU9"), -1);
    free(t);
}

static void test_affinity_columns(void **state)
{
    (void)state;
    cl_topo *t = malloc(sizeof(*t));
    assert_int_equal(cl_topo_load("datasets/topologies/hgx-a100.topo.txt", t), CL_OK);
    assert_string_equal(t->dev[4].cpu_affinity, "56-63,120-127");
    assert_int_equal(t->dev[4].numa_node, 7);
    assert_int_equal(t->dev[4].numa_given, 1);
    assert_string_equal(t->dev[9].cpu_affinity, ""); /* NIC rows have none */
    assert_int_equal(t->dev[9].numa_given, 0);
    /* No NUMA column at all (2019 driver). */
    assert_int_equal(cl_topo_load("datasets/topologies/dgx1-v100.topo.txt", t), CL_OK);
    assert_string_equal(t->dev[0].cpu_affinity, "0-19,40-59");
    assert_int_equal(t->dev[0].numa_given, 0);
    /* "N/A" NUMA affinity, tab separated, empty field before it. */
    const char *na = "tests/topo/real/club3090-178-2x3090-numa-na.topo.txt";
    assert_int_equal(cl_topo_load(na, t), CL_OK);
    assert_int_equal(t->dev[0].numa_given, 1);
    assert_int_equal(t->dev[0].numa_node, -1);
    assert_int_equal(t->dev[1].numa_node, 1);
    /* An empty CPU Affinity (two tabs) leaves the values right-aligned. */
    const char *empty_cpu = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
                            "GPU0\t X \tNV18\t\t0\t\tN/A\n"
                            "GPU1\tNV18\t X \t1\t1\t\tN/A\n";
    assert_int_equal(parse_string(empty_cpu, t), CL_OK);
    assert_string_equal(t->dev[0].cpu_affinity, "");
    assert_int_equal(t->dev[0].numa_node, 0);
    assert_string_equal(t->dev[1].cpu_affinity, "1");
    assert_int_equal(t->dev[1].numa_node, 1);
    free(t);
}

static void test_tabs_and_spaces_agree(void **state)
{
    (void)state;
    const char *spaces = "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity\n"
                         "GPU0     X      NV4     PXB     0-7     0\n"
                         "GPU1    NV4      X      SYS     8-15    1\n"
                         "NIC0    PXB     SYS      X\n\nNIC Legend:\n\n  NIC0: mlx5_0\n";
    const char *tabs = "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\r\n"
                       "GPU0\t X \tNV4\tPXB\t0-7\t0\r\n"
                       "GPU1\tNV4\t X \tSYS\t8-15\t1\r\n"
                       "NIC0\tPXB\tSYS\t X \t\t\r\n\r\nNIC Legend:\r\n\r\n  NIC0: mlx5_0\r\n";
    cl_topo *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_int_equal(parse_string(spaces, a), CL_OK);
    assert_int_equal(parse_string(tabs, b), CL_OK);
    char *ja = to_json(a), *jb = to_json(b);
    assert_string_equal(ja, jb);
    assert_string_equal(ja, "{\"devices\": [\"GPU0\", \"GPU1\", \"mlx5_0\"], \"links\": [[\"X\", "
                            "\"NV4\", \"PXB\"], [\"NV4\", \"X\", \"SYS\"], "
                            "[\"PXB\", \"SYS\", \"X\"]"
                            "], \"cpu_affinity\": {\"GPU0\": \"0-7\", \"GPU1\": \"8-15\"}, "
                            "\"numa_affinity\": {\"GPU0\": 0, \"GPU1\": 1}}\n");
    free(ja);
    free(jb);
    free(a);
    free(b);
}

static void test_spacing_losses(void **state)
{
    (void)state;
    cl_topo *t = malloc(sizeof(*t));
    /* nccl-tests#311: "NIC7NIC8" in the header, "SYSSYS", "PIXSYS", "X SYS" in rows. */
    assert_int_equal(cl_topo_load("datasets/topologies/hgx-a100.topo.txt", t), CL_OK);
    int nic7 = cl_topo_find(t, "NIC7"), nic8 = cl_topo_find(t, "NIC8");
    assert_int_equal(nic8, nic7 + 1);
    assert_string_equal(t->link[0][nic8].code, "SYS");
    assert_string_equal(t->link[cl_topo_find(t, "NIC6")][nic7].code, "PIX");
    assert_string_equal(t->link[nic7][nic8].code, "SYS");
    assert_string_equal(t->link[nic8][nic8 + 1].code, "PIX");
    const char *glued = "        GPU0    GPU1GPU2\nGPU0     X      NV2NV2\nGPU1    NV2      X SYS\n"
                        "GPU2    NV2SYS X\n";
    assert_int_equal(parse_string(glued, t), CL_OK);
    assert_int_equal(t->ndevices, 3);
    assert_string_equal(t->link[2][1].code, "SYS");
    free(t);
}

static void test_asymmetric_accepted(void **state)
{
    (void)state;
    const char *asym = "        GPU0    NIC0\nGPU0     X      PIX\nNIC0    PXB      X\n";
    cl_topo *t = malloc(sizeof(*t));
    assert_int_equal(parse_string(asym, t), CL_OK);
    assert_int_equal(t->link[0][1].kind, CL_LINK_PIX);
    assert_int_equal(t->link[1][0].kind, CL_LINK_PXB);
    free(t);
}

static void test_bad_files_report_line(void **state)
{
    (void)state;
    char *list = slurp("tests/topo/bad/EXPECTED");
    assert_non_null(list);
    cl_topo *t = malloc(sizeof(*t));
    int checked = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        *tab = '\0';
        char path[512];
        snprintf(path, sizeof(path), "tests/topo/bad/%s", line);
        cl_clear_error();
        cl_result rc = cl_topo_load(path, t);
        if (rc != CL_ERR_PARSE)
            fail_msg("%s: expected CL_ERR_PARSE, got %d", path, rc);
        const char *err = cl_last_error();
        if (strncmp(err, path, strlen(path)) != 0 || strstr(err, tab + 1) == NULL)
            fail_msg("%s: error '%s' lacks '%s'", path, err, tab + 1);
        assert_int_equal(t->ndevices, 0);
        checked++;
    }
    assert_true(checked >= 10);
    free(t);
    free(list);
}

static void test_missing_file(void **state)
{
    (void)state;
    cl_topo *t = malloc(sizeof(*t));
    assert_int_equal(cl_topo_load("tests/topo/no-such-file.txt", t), CL_ERR_IO);
    assert_non_null(strstr(cl_last_error(), "no-such-file.txt"));
    free(t);
}

/* A hand-made tree: cpu0 { sw A { sw B { GPU0, NIC mlx5_0 } , GPU1 }, GPU2, nic mlx5_1 },
 * cpu1 { GPU3 } ; GPU0-GPU1 have 2 direct NVLinks. */
static const char *small_xml =
    "<?xml version=\"1.0\"?>\n"
    "<!-- hand-made -->\n"
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\" affinity=\"00000000,0000ff0f\" arch=\"x86_64\">\n"
    "    <pci busid=\"0000:10:00.0\" class=\"0x060400\">\n"
    "      <pci busid=\"0000:11:00.0\" class=\"0x060400\">\n"
    "        <pci busid=\"0000:12:00.0\" class=\"0x030200\">\n"
    "          <gpu dev=\"0\" sm=\"70\" rank=\"0\" gdr=\"1\">\n"
    "            <nvlink target=\"0000:13:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
    "          </gpu>\n"
    "        </pci>\n"
    "        <pci busid=\"0000:14:00.0\" class=\"0x020700\">\n"
    "          <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"100000\"/></nic>\n"
    "        </pci>\n"
    "      </pci>\n"
    "      <pci busid=\"0000:13:00.0\" class=\"0x030200\">\n"
    "        <gpu dev=\"1\" sm=\"70\" rank=\"1\" gdr=\"1\"/>\n"
    "      </pci>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:20:00.0\" class=\"0x030200\"><gpu dev=\"2\" sm=\"70\"/></pci>\n"
    "    <nic><net name=\"mlx5_1\" dev=\"1\"/></nic>\n"
    "  </cpu>\n"
    "  <cpu numaid=\"-1\" affinity=\"ffff0000,00000000\">\n"
    "    <pci busid=\"0000:80:00.0\" class=\"0x030200\"><gpu dev=\"3\" sm=\"70\"/></pci>\n"
    "  </cpu>\n"
    "</system>\n";

static void test_xml_pcie_classes(void **state)
{
    (void)state;
    cl_topo *t = malloc(sizeof(*t));
    assert_int_equal(parse_string(small_xml, t), CL_OK);
    char *j = to_json(t);
    assert_string_equal(
        j, "{\"devices\": [\"GPU0\", \"GPU1\", \"GPU2\", \"GPU3\", \"mlx5_0\", \"mlx5_1\"], "
           "\"links\": ["
           "[\"X\", \"NV2\", \"PHB\", \"SYS\", \"PIX\", \"PHB\"], "
           "[\"NV2\", \"X\", \"PHB\", \"SYS\", \"PXB\", \"PHB\"], "
           "[\"PHB\", \"PHB\", \"X\", \"SYS\", \"PHB\", \"PHB\"], "
           "[\"SYS\", \"SYS\", \"SYS\", \"X\", \"SYS\", \"SYS\"], "
           "[\"PIX\", \"PXB\", \"PHB\", \"SYS\", \"X\", \"PHB\"], "
           "[\"PHB\", \"PHB\", \"PHB\", \"SYS\", \"PHB\", \"X\"]], "
           "\"cpu_affinity\": {\"GPU0\": \"0-3,8-15\", \"GPU1\": \"0-3,8-15\", \"GPU2\": "
           "\"0-3,8-15\", \"GPU3\": \"48-63\", \"mlx5_0\": \"0-3,8-15\", "
           "\"mlx5_1\": \"0-3,8-15\"}, "
           "\"numa_affinity\": {\"GPU0\": 0, \"GPU1\": 0, \"GPU2\": 0, \"GPU3\": null, "
           "\"mlx5_0\": 0, \"mlx5_1\": 0}}\n");
    free(j);
    assert_string_equal(t->dev[1].busid, "0000:13:00.0");
    assert_string_equal(t->dev[5].busid, "");
    free(t);
}

static void test_xml_nvswitch_counts(void **state)
{
    (void)state;
    cl_topo *t = malloc(sizeof(*t));
    assert_int_equal(cl_topo_load("datasets/topologies/ibm-vpc-h100-vsi.nccl.xml", t), CL_OK);
    assert_int_equal(cl_topo_gpu_count(t), 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i != j)
                assert_string_equal(t->link[i][j].code, "NV18"); /* 5+5+4+4 switch links */
    assert_int_equal(cl_topo_load("datasets/topologies/hgx-a100-4nic.nccl.xml", t), CL_OK);
    assert_int_equal(t->link[0][7].nvlinks, 12); /* 6 switches x 2 */
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datasets_match_expected),
        cmocka_unit_test(test_real_matrices_match_expected),
        cmocka_unit_test(test_legend_codes),
        cmocka_unit_test(test_nic_legend_resolution),
        cmocka_unit_test(test_affinity_columns),
        cmocka_unit_test(test_tabs_and_spaces_agree),
        cmocka_unit_test(test_spacing_losses),
        cmocka_unit_test(test_asymmetric_accepted),
        cmocka_unit_test(test_bad_files_report_line),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_xml_pcie_classes),
        cmocka_unit_test(test_xml_nvswitch_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
