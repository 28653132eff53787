#include "pipelines/jpeg_check.h"

#include <jpeglib.h>

#include <csetjmp>
#include <cstdio>  // jpeglib.h uses FILE without including it

namespace edgemm::pipelines {
namespace {

/// libjpeg error manager: a fatal error jumps back with its message; warnings are counted
/// (pub.num_warnings) and the first one's message kept. Plain data only, as longjmp skips
/// destructors.
struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char fatal[JMSG_LENGTH_MAX];
  char first_warning[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_fatal(j_common_ptr info) {
  auto* err = reinterpret_cast<ErrorManager*>(info->err);
  info->err->format_message(info, err->fatal);
  std::longjmp(err->jump, 1);
}

void on_message(j_common_ptr info, int level) {
  if (level >= 0) return;  // trace messages; -1 is a warning
  auto* err = reinterpret_cast<ErrorManager*>(info->err);
  if (err->pub.num_warnings++ == 0) info->err->format_message(info, err->first_warning);
}

/// Reads the whole image at 1/8 scale; returns normally or jumps to err->jump.
void decode_small(jpeg_decompress_struct& info, const std::vector<uint8_t>& bytes) {
  jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  info.scale_num = 1;
  info.scale_denom = 8;
  info.dct_method = JDCT_IFAST;
  info.do_fancy_upsampling = FALSE;
  jpeg_start_decompress(&info);
  const JDIMENSION stride = info.output_width * static_cast<JDIMENSION>(info.output_components);
  JSAMPARRAY row = (*info.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&info), JPOOL_IMAGE, stride, 1);
  while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, row, 1);
  jpeg_finish_decompress(&info);
}

}  // namespace

Status check_jpeg_data(const std::vector<uint8_t>& bytes, const std::string& what) {
  jpeg_decompress_struct info{};
  ErrorManager err{};
  info.err = jpeg_std_error(&err.pub);
  err.pub.error_exit = on_fatal;
  err.pub.emit_message = on_message;
  jpeg_create_decompress(&info);
  const bool failed = setjmp(err.jump) != 0;
  if (!failed) decode_small(info, bytes);
  jpeg_destroy_decompress(&info);
  if (failed) return Status(StatusCode::kInvalidArgument, what + " is a corrupt JPEG: " + err.fatal);
  if (err.pub.num_warnings > 0) {
    return Status(StatusCode::kInvalidArgument, what + " is a corrupt JPEG: " + err.first_warning);
  }
  return Status::ok();
}

}  // namespace edgemm::pipelines
