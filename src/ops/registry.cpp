#include "stoker/ops/registry.hpp"

#include "stoker/ops/boxes/bb_flip.hpp"
#include "stoker/ops/boxes/bbox_paste.hpp"
#include "stoker/ops/boxes/bbox_rotate.hpp"
#include "stoker/ops/boxes/box_encoder.hpp"
#include "stoker/ops/boxes/random_bbox_crop.hpp"
#include "stoker/ops/color/clahe.hpp"
#include "stoker/ops/color/color_ops.hpp"
#include "stoker/ops/color/debayer.hpp"
#include "stoker/ops/color/equalize.hpp"
#include "stoker/ops/color/lookup_table.hpp"
#include "stoker/ops/conditional/conditional.hpp"
#include "stoker/ops/decoders/audio_decoder.hpp"
#include "stoker/ops/decoders/image_decoder.hpp"
#include "stoker/ops/decoders/inflate.hpp"
#include "stoker/ops/decoders/numpy_decoder.hpp"
#include "stoker/ops/decoders/video_decoder.hpp"
#include "stoker/ops/distortion/jpeg_compression_distortion.hpp"
#include "stoker/ops/filter/filter.hpp"
#include "stoker/ops/filter/gaussian_blur.hpp"
#include "stoker/ops/filter/laplacian.hpp"
#include "stoker/ops/filter/rank_filters.hpp"
#include "stoker/ops/flow/optical_flow.hpp"
#include "stoker/ops/geometry/coord_flip.hpp"
#include "stoker/ops/geometry/coord_transform.hpp"
#include "stoker/ops/geometry/crop_flip.hpp"
#include "stoker/ops/geometry/displacement.hpp"
#include "stoker/ops/geometry/erase.hpp"
#include "stoker/ops/geometry/grid_mask.hpp"
#include "stoker/ops/geometry/jitter_paste.hpp"
#include "stoker/ops/geometry/multi_paste.hpp"
#include "stoker/ops/geometry/random_crop_generator.hpp"
#include "stoker/ops/geometry/remap.hpp"
#include "stoker/ops/geometry/resize.hpp"
#include "stoker/ops/geometry/resize_crop_mirror.hpp"
#include "stoker/ops/geometry/roi_random_crop.hpp"
#include "stoker/ops/geometry/slice.hpp"
#include "stoker/ops/geometry/tensor_resize.hpp"
#include "stoker/ops/geometry/transforms.hpp"
#include "stoker/ops/geometry/warp.hpp"
#include "stoker/ops/geometry/warp_perspective.hpp"
#include "stoker/ops/io/copy_to_device.hpp"
#include "stoker/ops/io/dump_image.hpp"
#include "stoker/ops/io/external_source.hpp"
#include "stoker/ops/io/file_read.hpp"
#include "stoker/ops/io/python_function.hpp"
#include "stoker/ops/io/video_input.hpp"
#include "stoker/ops/math/arithmetic.hpp"
#include "stoker/ops/normalize/crop_mirror_normalize.hpp"
#include "stoker/ops/normalize/normalize.hpp"
#include "stoker/ops/random/batch_permutation.hpp"
#include "stoker/ops/random/beta.hpp"
#include "stoker/ops/random/choice.hpp"
#include "stoker/ops/random/coin_flip.hpp"
#include "stoker/ops/random/noise.hpp"
#include "stoker/ops/random/normal.hpp"
#include "stoker/ops/random/uniform.hpp"
#include "stoker/ops/readers/caffe2_reader.hpp"
#include "stoker/ops/readers/caffe_reader.hpp"
#include "stoker/ops/readers/coco_reader.hpp"
#include "stoker/ops/readers/experimental_video_reader.hpp"
#include "stoker/ops/readers/file_reader.hpp"
#include "stoker/ops/readers/fits_reader.hpp"
#include "stoker/ops/readers/nemo_asr_reader.hpp"
#include "stoker/ops/readers/mxnet_reader.hpp"
#include "stoker/ops/readers/numpy_reader.hpp"
#include "stoker/ops/readers/sequence_reader.hpp"
#include "stoker/ops/readers/tfrecord_reader.hpp"
#include "stoker/ops/readers/video_reader.hpp"
#include "stoker/ops/readers/video_resize_reader.hpp"
#include "stoker/ops/readers/webdataset_reader.hpp"
#include "stoker/ops/reduce/reductions.hpp"
#include "stoker/ops/segmentation/random_mask_pixel.hpp"
#include "stoker/ops/segmentation/random_object_bbox.hpp"
#include "stoker/ops/segmentation/select_masks.hpp"
#include "stoker/ops/signal/audio_resample.hpp"
#include "stoker/ops/signal/mel_filter_bank.hpp"
#include "stoker/ops/signal/mfcc.hpp"
#include "stoker/ops/signal/nonsilent_region.hpp"
#include "stoker/ops/signal/power_spectrum.hpp"
#include "stoker/ops/signal/preemphasis_filter.hpp"
#include "stoker/ops/signal/spectrogram.hpp"
#include "stoker/ops/signal/to_decibels.hpp"
#include "stoker/ops/tensor/cast.hpp"
#include "stoker/ops/tensor/constant.hpp"
#include "stoker/ops/tensor/fill_ops.hpp"
#include "stoker/ops/tensor/get_property.hpp"
#include "stoker/ops/tensor/join.hpp"
#include "stoker/ops/tensor/one_hot.hpp"
#include "stoker/ops/tensor/pad.hpp"
#include "stoker/ops/tensor/permute_batch.hpp"
#include "stoker/ops/tensor/reshape.hpp"
#include "stoker/ops/tensor/sequence_ops.hpp"
#include "stoker/ops/tensor/shape_ops.hpp"
#include "stoker/ops/tensor/shapes.hpp"
#include "stoker/ops/tensor/subscript.hpp"
#include "stoker/ops/tensor/transpose.hpp"

namespace stoker::ops {

const std::vector<OpSchema>& op_schemas() {
  // Sorted by operator name. Adding an operator adds one line here.
  // clang-format off
  static const std::vector<OpSchema> kAll = [] {
  std::vector<OpSchema> all{
      merge_schema(),                  // _conditional.merge
      not_schema(),                    // _conditional.not_
      split_schema(),                  // _conditional.split
      validate_logical_schema(),       // _conditional.validate_logical
      subscript_dim_check_schema(),    // _subscript_dim_check
      tensor_subscript_schema(),       // _tensor_subscript
      arithmetic_schema(),             // arithmetic
      audio_resample_schema(),         // audio_resample
      batch_permutation_schema(),      // batch_permutation
      bb_flip_schema(),                // bb_flip
      bbox_paste_schema(),             // bbox_paste
      bbox_rotate_schema(),            // bbox_rotate
      box_encoder_schema(),            // box_encoder
      brightness_schema(),             // brightness
      brightness_contrast_schema(),    // brightness_contrast
      cast_schema(),                   // cast
      cast_like_schema(),              // cast_like
      cat_schema(),                    // cat
      clahe_schema(),                  // clahe
      color_space_conversion_schema(),  // color_space_conversion
      color_twist_schema(),            // color_twist
      constant_schema(),               // constant
      contrast_schema(),               // contrast
      coord_flip_schema(),             // coord_flip
      coord_transform_schema(),        // coord_transform
      copy_schema(),                   // copy
      copy_to_device_schema(),         // copy_to_device
      crop_schema(),                   // crop
      crop_mirror_normalize_schema(),  // crop_mirror_normalize
      debayer_schema(),                // debayer
      audio_decoder_schema(),          // decoders.audio
      image_decoder_schema(),          // decoders.image
      image_crop_decoder_schema(),     // decoders.image_crop
      image_random_crop_decoder_schema(),  // decoders.image_random_crop
      image_slice_decoder_schema(),    // decoders.image_slice
      inflate_schema(),                // decoders.inflate
      numpy_decoder_schema(),          // decoders.numpy
      video_decoder_schema(),          // decoders.video
      dump_image_schema(),             // dump_image
      element_extract_schema(),        // element_extract
      equalize_schema(),               // equalize
      erase_schema(),                  // erase
      expand_dims_schema(),            // expand_dims
      dilate_schema(),                 // experimental.dilate
      erode_schema(),                  // experimental.erode
      video_input_schema(),            // experimental.inputs.video
      median_blur_schema(),            // experimental.median_blur
      fits_reader_schema(),            // experimental.readers.fits
      experimental_video_reader_schema(),  // experimental.readers.video
      remap_schema(),                  // experimental.remap
      experimental_resize_schema(),    // experimental.resize
      warp_perspective_schema(),       // experimental.warp_perspective
      external_source_schema(),        // external_source
      filter_schema(),                 // filter
      flip_schema(),                   // flip
      full_schema(),                   // full
      full_like_schema(),              // full_like
      gaussian_blur_schema(),          // gaussian_blur
      get_property_schema(),           // get_property
      grid_mask_schema(),              // grid_mask
      hsv_schema(),                    // hsv
      hue_schema(),                    // hue
      file_read_schema(),              // io.file.read
      jitter_schema(),                 // jitter
      jpeg_compression_distortion_schema(),  // jpeg_compression_distortion
      laplacian_schema(),              // laplacian
      lookup_table_schema(),           // lookup_table
      beta_schema(),                   // random.beta
      choice_schema(),                 // random.choice
      coin_flip_schema(),              // random.coin_flip
      normal_schema(),                 // random.normal
      uniform_schema(),                // random.uniform
      mel_filter_bank_schema(),        // mel_filter_bank
      mfcc_schema(),                   // mfcc
      multi_paste_schema(),            // multi_paste
      gaussian_noise_schema(),         // noise.gaussian
      salt_and_pepper_noise_schema(),  // noise.salt_and_pepper
      shot_noise_schema(),             // noise.shot
      nonsilent_region_schema(),       // nonsilent_region
      normalize_schema(),              // normalize
      one_hot_schema(),                // one_hot
      ones_schema(),                   // ones
      ones_like_schema(),              // ones_like
      optical_flow_schema(),           // optical_flow
      pad_schema(),                    // pad
      paste_schema(),                  // paste
      peek_image_shape_schema(),       // peek_image_shape
      per_frame_schema(),              // per_frame
      permute_batch_schema(),          // permute_batch
      power_spectrum_schema(),         // power_spectrum
      preemphasis_filter_schema(),     // preemphasis_filter
      python_function_schema(),        // python_function
      random_bbox_crop_schema(),       // random_bbox_crop
      random_crop_generator_schema(),  // random_crop_generator
      random_resized_crop_schema(),    // random_resized_crop
      caffe_reader_schema(),           // readers.caffe
      caffe2_reader_schema(),          // readers.caffe2
      coco_reader_schema(),            // readers.coco
      file_reader_schema(),            // readers.file
      mxnet_reader_schema(),           // readers.mxnet
      nemo_asr_reader_schema(),        // readers.nemo_asr
      numpy_reader_schema(),           // readers.numpy
      sequence_reader_schema(),        // readers.sequence
      tfrecord_reader_schema(),        // readers.tfrecord
      video_reader_schema(),           // readers.video
      video_resize_reader_schema(),    // readers.video_resize
      webdataset_reader_schema(),      // readers.webdataset
      reduce_max_schema(),             // reductions.max
      reduce_mean_schema(),            // reductions.mean
      reduce_mean_square_schema(),     // reductions.mean_square
      reduce_min_schema(),             // reductions.min
      reduce_rms_schema(),             // reductions.rms
      reduce_std_dev_schema(),         // reductions.std_dev
      reduce_sum_schema(),             // reductions.sum
      reduce_variance_schema(),        // reductions.variance
      reinterpret_schema(),            // reinterpret
      reshape_schema(),                // reshape
      roi_random_crop_schema(),        // roi_random_crop
      resize_schema(),                 // resize
      resize_crop_mirror_schema(),     // resize_crop_mirror
      rotate_schema(),                 // rotate
      saturation_schema(),             // saturation
      random_mask_pixel_schema(),      // segmentation.random_mask_pixel
      random_object_bbox_schema(),     // segmentation.random_object_bbox
      select_masks_schema(),           // segmentation.select_masks
      sequence_rearrange_schema(),     // sequence_rearrange
      shapes_schema(),                 // shapes
      slice_schema(),                  // slice
      spectrogram_schema(),            // spectrogram
      sphere_schema(),                 // sphere
      squeeze_schema(),                // squeeze
      stack_schema(),                  // stack
      tensor_resize_schema(),          // tensor_resize
      to_decibels_schema(),            // to_decibels
      combine_transform_schema(),      // transforms.combine
      crop_transform_schema(),         // transforms.crop
      rotation_transform_schema(),     // transforms.rotation
      scale_transform_schema(),        // transforms.scale
      shear_transform_schema(),        // transforms.shear
      translation_transform_schema(),  // transforms.translation
      transpose_schema(),              // transpose
      warp_affine_schema(),            // warp_affine
      water_schema(),                  // water
      zeros_schema(),                  // zeros
      zeros_like_schema(),             // zeros_like
  };
  for (auto& s : all) {
    if (s.random) s.args.push_back(seed_arg());
  }
  return all;
  }();
  // clang-format on
  return kAll;
}

const OpSchema& device_copy_schema() {
  static const OpSchema* s = find_op_schema("copy_to_device");
  return *s;
}

const OpSchema* find_op_schema(std::string_view name) {
  for (auto& s : op_schemas()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace stoker::ops
