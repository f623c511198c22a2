/*
 * api_version.h: the Kubernetes release the served API (simulate --serve)
 * reports, in /version and in OpenAPI's info.version: the one release
 * luasched follows. One home, so that whatever else names the served
 * version (discovery pretending to be an older server included) reads it
 * from here.
 */
#ifndef LS_SIM_API_VERSION_H
#define LS_SIM_API_VERSION_H

#define LS_API_SERVER_MAJOR "1"
#define LS_API_SERVER_MINOR "37"
#define LS_API_SERVER_GIT_VERSION "v" LS_API_SERVER_MAJOR "." LS_API_SERVER_MINOR ".0-luasched"

#endif
