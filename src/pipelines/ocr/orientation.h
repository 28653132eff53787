#pragma once
/// \file orientation.h
/// Whole-image orientation for OCR: which of 0°, 90°, 180° or 270° an image is turned by, told
/// from the shapes of its detected lines and the angle classifier's 0°/180° votes on their
/// crops, and the maps between the image and its upright form. PaddleOCR answers the same
/// question with a separate document-orientation model (PP-LCNet_x1_0_doc_ori in PaddleX's
/// doc_preprocessor); this needs none: a line box much taller than wide is text running down
/// or up the page, and the classifier on its crop (turned 90° counter-clockwise by
/// crop_text_region) tells which.

#include <opencv2/core.hpp>
#include <vector>

#include "pipelines/ocr/det.h"

namespace edgemm::ocr {

/// What one detected line says about its image's orientation.
struct OrientationVote {
  float dx = 0;  ///< the direction (image pixels, y down) its crop's text runs in if upright
  float dy = 0;
  float aspect = 0;  ///< the box's longer side over its shorter one
  float p180 = 0;    ///< the classifier's probability that the crop is upside down
};

/// The vote of a detected box: the direction its crop's text runs in (crop_text_region warps
/// the top edge, corner 0 to 1, to the crop's x axis; a crop turned 90° counter-clockwise
/// reads along the left edge, corner 0 to 3), its aspect ratio and the classifier's p180.
OrientationVote orientation_vote(const Quad& box, float p180);

/// Clockwise degrees (0, 90, 180 or 270) by which an image is turned from upright, from its
/// lines' votes. Only elongated boxes (aspect ≥ 1.5) vote: weight × (1 − p180) for the
/// quarter turn nearest to their text direction (right: 0°, down: 90°, left: 180°, up: 270°)
/// and weight × p180 for the opposite one, where the weight is the aspect ratio (a proxy for
/// the number of characters), at most 25. Returns the degrees with the largest total when that
/// total is more than half of all votes' weight; otherwise, and when no box is elongated, 0.
int image_orientation(const std::vector<OrientationVote>& votes);

/// The image turned counter-clockwise by `degrees` (0, 90, 180 or 270): the upright form of an
/// image turned clockwise by `degrees`. Lossless (pixels are moved, not resampled).
cv::Mat turn_upright(const cv::Mat& image, int degrees);

/// Maps a quadrilateral from the upright form (turn_upright(image, degrees)) back into the
/// image turned by `degrees`, whose size is `turned`. Coordinates are those of pixel centres
/// (pixel (i, j) at (i, j)), as db_postprocess's boxes are; the corners keep their order, so
/// the first is still the text's own top-left corner.
Quad quad_in_turned_image(const Quad& quad, int degrees, cv::Size turned);

}  // namespace edgemm::ocr
