/*
 * new.c: `luasched new plugin NAME`: writes a plugin author's starting point
 * into the current folder: the plugin (NAME in snake_case + ".lua", the file
 * name the loader looks for), its busted spec (spec/NAME_spec.lua, which
 * `luasched test` runs from this folder with no path set: the kit looks for
 * plugins in the current folder first) and a profile enabling it
 * (NAME_profile.yaml, whose luasched.pluginPath is the folder it sits in).
 * Existing files are never overwritten. docs/plugins/tutorial.md walks
 * through what to do next.
 */
#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { NAME_MAX_LEN = 63 };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: luasched new plugin NAME\n"
            "\n"
            "writes a plugin into the current folder: NAME's file (PreferGold -> prefer_gold.lua),\n"
            "its spec (spec/prefer_gold_spec.lua, run by `luasched test`) and a profile enabling it\n"
            "(prefer_gold_profile.yaml: `luasched simulate CLUSTER --config prefer_gold_profile.yaml`).\n"
            "NAME is the registered name, CamelCase as Kubernetes plugin names are. Existing files are\n"
            "left alone. Next steps: docs/plugins/tutorial.md.\n");
}

/* A registered name: a capital letter, then letters and digits. */
static bool valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > NAME_MAX_LEN || !isupper((unsigned char)name[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]))
            return false;
    return true;
}

/* What a name that is not one most likely meant: its words (split at
 * anything but a letter or digit) capitalized and joined, prefer_gold and
 * prefer-gold as PreferGold. */
static void camel_case(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    bool start = true;
    for (; *name && n + 1 < cap; name++) {
        unsigned char c = (unsigned char)*name;
        if (!isalnum(c)) {
            start = true;
            continue;
        }
        out[n++] = (char)(start ? toupper(c) : c);
        start = false;
    }
    out[n] = 0;
}

/* The loader's file name (lua/luasched/loader.lua, file_name): "_" between a
 * lower-case letter and a capital, then between two capitals followed by a
 * lower-case letter (HTTPServer -> http_server), all lower-cased. */
static void snake_case(const char *name, char *out, size_t cap)
{
    char pass1[2 * NAME_MAX_LEN + 2];
    size_t j = 0;
    for (size_t i = 0; name[i] && j + 3 < sizeof pass1; i++) {
        pass1[j++] = name[i];
        if (islower((unsigned char)name[i]) && isupper((unsigned char)name[i + 1])) {
            pass1[j++] = '_';
            pass1[j++] = name[++i];
        }
    }
    pass1[j] = '\0';
    j = 0;
    for (size_t i = 0; pass1[i] && j + 4 < cap; i++) {
        if (isupper((unsigned char)pass1[i]) && isupper((unsigned char)pass1[i + 1]) &&
            islower((unsigned char)pass1[i + 2])) {
            out[j++] = (char)tolower((unsigned char)pass1[i]);
            out[j++] = '_';
            out[j++] = (char)tolower((unsigned char)pass1[i + 1]);
            out[j++] = pass1[i + 2];
            i += 2;
            continue;
        }
        out[j++] = (char)tolower((unsigned char)pass1[i]);
    }
    out[j] = '\0';
}

static const char PLUGIN[] =
    "-- %1$s: a luasched scheduling plugin (made by `luasched new plugin %1$s`).\n"
    "-- Score prefers the nodes whose label `key` has the value `value` (its args: the\n"
    "-- defaults below, which a profile's pluginConfig overrides). Every hook, ls.* function\n"
    "-- and view field: docs/plugins/api.md; what a plugin may do: docs/plugins/contract.md.\n"
    "local ls = require(\"luasched\")\n"
    "\n"
    "local P = ls.plugin(\"%1$s\", { defaults = { key = \"tier\", value = \"gold\" } })\n"
    "\n"
    "-- Once per profile, with the merged args: intern strings here, not per node.\n"
    "function P:init(args)\n"
    "  self.key, self.value = ls.intern(args.key), ls.intern(args.value)\n"
    "end\n"
    "\n"
    "-- Once per feasible node: 0..100, weighted and summed with the other plugins' scores.\n"
    "---@param node ls.NodeInfo\n"
    "function P:score(_, _, node)\n"
    "  if ls.label(node.node.labels, self.key) == self.value then return ls.MAX_NODE_SCORE end\n"
    "  return ls.MIN_NODE_SCORE\n"
    "end\n"
    "\n"
    "return P\n";

static const char SPEC[] =
    "-- The spec of %1$s: `luasched test` runs it from the plugin's folder.\n"
    "local T = require(\"luasched.testing\")\n"
    "\n"
    "describe(\"%1$s\", function()\n"
    "  local cluster = T.cluster { nodes = { { name = \"gold\", labels = { tier = \"gold\" } },\n"
    "                                        { name = \"plain\" } } }\n"
    "\n"
    "  it(\"scores the labeled node highest\", function()\n"
    "    local p = T.plugin(\"%1$s\")\n"
    "    assert.are.same({ gold = 100, plain = 0 }, T.cycle(p, cluster, T.pod { name = \"web\" }).scores)\n"
    "  end)\n"
    "\n"
    "  it(\"takes the label from its args\", function()\n"
    "    local p = T.plugin(\"%1$s\", { key = \"tier\", value = \"silver\" })\n"
    "    assert.are.same({ gold = 0, plain = 0 }, T.cycle(p, cluster, T.pod { name = \"web\" }).scores)\n"
    "  end)\n"
    "end)\n";

static const char PROFILE[] =
    "# The default profile with %1$s added (made by `luasched new plugin %1$s`):\n"
    "#   luasched check %2$s_profile.yaml\n"
    "#   luasched simulate CLUSTER.yaml --config %2$s_profile.yaml\n"
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "profiles:\n"
    "- schedulerName: default-scheduler\n"
    "  plugins:\n"
    "    multiPoint:\n"
    "      enabled:\n"
    "      - name: %1$s\n"
    "        weight: 3   # as much as TaintToleration's: enough to outweigh a PreferNoSchedule taint\n"
    "  pluginConfig:\n"
    "  - name: %1$s\n"
    "    args: {key: tier, value: gold}\n"
    "luasched:\n"
    "  pluginPath: [.]   # relative to this file: the plugin is beside it\n";

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Writes `fmt` with the name and the file stem into `path`; false (said) on failure. */
static bool write_file(const char *path, const char *fmt, const char *name, const char *stem)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "luasched new: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    fprintf(f, fmt, name, stem);
    if (fclose(f) != 0) {
        fprintf(stderr, "luasched new: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    printf("wrote %s\n", path);
    return true;
}

static int new_plugin(const char *name)
{
    if (!valid_name(name)) {
        char camel[NAME_MAX_LEN + 1];
        camel_case(name, camel, sizeof camel);
        fprintf(stderr,
                "luasched new plugin: \"%s\" is not a plugin name: expected a capital letter, then letters and "
                "digits (at most %d), as %s\n",
                name, NAME_MAX_LEN, valid_name(camel) ? camel : "PreferGold");
        return LS_EXIT_USAGE;
    }
    char stem[2 * NAME_MAX_LEN + 2];
    snake_case(name, stem, sizeof stem);
    char plugin[sizeof stem + 8], spec[sizeof stem + 16], profile[sizeof stem + 16];
    snprintf(plugin, sizeof plugin, "%s.lua", stem);
    snprintf(spec, sizeof spec, "spec/%s_spec.lua", stem);
    snprintf(profile, sizeof profile, "%s_profile.yaml", stem);
    const char *paths[] = {plugin, spec, profile};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        if (exists(paths[i])) {
            fprintf(stderr, "luasched new plugin: %s exists already: nothing written (move it away or pick another "
                            "name)\n", paths[i]);
            return LS_EXIT_USAGE;
        }
    }
    if (mkdir("spec", 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "luasched new: cannot make the folder spec: %s\n", strerror(errno));
        return LS_EXIT_FAILURE;
    }
    if (!write_file(plugin, PLUGIN, name, stem) || !write_file(spec, SPEC, name, stem) ||
        !write_file(profile, PROFILE, name, stem))
        return LS_EXIT_FAILURE;
    printf("next: luasched test, then luasched simulate CLUSTER.yaml --config %s\n", profile);
    return LS_EXIT_OK;
}

int ls_cli_new(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return LS_EXIT_OK;
    }
    if (argc != 3 || strcmp(argv[1], "plugin") != 0) {
        if (argc >= 2 && strcmp(argv[1], "plugin") != 0)
            fprintf(stderr, "luasched new: unknown kind \"%s\": only \"plugin\" can be made\n", argv[1]);
        usage(stderr);
        return LS_EXIT_USAGE;
    }
    return new_plugin(argv[2]);
}
