#pragma once
/// \file profile_json.h
/// A ProfileReport as a JSON value and back (schema "edgemm.profile/1", described at
/// profile_report_json in edgemm/tools/model_profile.h): profile_report_from_json gives exactly
/// the report that profile_report_to_json wrote.

#include <nlohmann/json.hpp>

#include "edgemm/tools/model_profile.h"

namespace edgemm::bench {

/// The report as JSON (see profile_report_json for the fields).
nlohmann::json profile_report_to_json(const ProfileReport& report);

/// Reads what profile_report_to_json wrote (exactly the same report back).
/// Errors: kInvalidArgument when "schema" is not "edgemm.profile/1" or a field is missing or
/// of the wrong type (the message names it).
Expected<ProfileReport> profile_report_from_json(const nlohmann::json& json);

}  // namespace edgemm::bench
